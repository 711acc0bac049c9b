#include <sqlite3.h>
static inline void (*_Nonnull peer_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
