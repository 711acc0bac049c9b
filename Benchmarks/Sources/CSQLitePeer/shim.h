#include <sqlite3.h>
static inline void (*_Nonnull peer_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
#include <malloc.h>
/// Bytes of the heap in use (glibc's allocator), for the memory scenarios.
static inline size_t peer_heap_in_use(void) { struct mallinfo2 info = mallinfo2(); return info.uordblks; }
