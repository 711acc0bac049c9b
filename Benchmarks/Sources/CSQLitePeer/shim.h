#include <sqlite3.h>
static inline void (*_Nonnull peer_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
#include <malloc.h>
/// Bytes of the heap in use (glibc's allocator), for the memory scenarios: chunks in use plus
/// blocks glibc maps on their own (allocations of 128 KiB and more, such as an array of 100,000
/// records or a hash table's buckets, are not in `uordblks`).
static inline size_t peer_heap_in_use(void) { struct mallinfo2 info = mallinfo2(); return info.uordblks + info.hblkhd; }
/// One arena for every thread: `mallinfo2` reports the main arena only, and a context's queue may
/// allocate from another. Called before any thread starts.
static inline void peer_use_one_arena(void) { mallopt(M_ARENA_MAX, 1); }
