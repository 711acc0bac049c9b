#ifndef OPENCOREDATA_CSQLITE_SHIM_H
#define OPENCOREDATA_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro Swift cannot import: tells SQLite to copy a bound value.
static inline void (*_Nonnull ocd_sqlite_transient(void))(void *) {
    return SQLITE_TRANSIENT;
}
#endif
