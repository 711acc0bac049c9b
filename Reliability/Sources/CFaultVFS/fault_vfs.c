#include "fault_vfs.h"
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;   /* the default VFS's file, allocated right after this struct */
} FaultFile;

static sqlite3_vfs fault_vfs;
static sqlite3_vfs *original;
static atomic_int armed_kind = -1;
static atomic_long countdown = 0;
static atomic_int fired = 0;

/* Whether this operation of `kind` is the one that fails. */
static int should_fail(int kind) {
    if (atomic_load(&armed_kind) != kind) return 0;
    if (atomic_fetch_sub(&countdown, 1) != 1) return 0;
    atomic_store(&armed_kind, -1);
    atomic_store(&fired, 1);
    return 1;
}

#define REAL(file) (((FaultFile *)(file))->real)

static int f_close(sqlite3_file *file) { return REAL(file)->pMethods->xClose(REAL(file)); }
static int f_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    if (should_fail(FAULT_READ)) return SQLITE_IOERR_READ;
    return REAL(file)->pMethods->xRead(REAL(file), buffer, amount, offset);
}
static int f_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    if (should_fail(FAULT_WRITE)) return SQLITE_IOERR_WRITE;
    if (should_fail(FAULT_FULL)) return SQLITE_FULL;
    return REAL(file)->pMethods->xWrite(REAL(file), buffer, amount, offset);
}
static int f_truncate(sqlite3_file *file, sqlite3_int64 size) { return REAL(file)->pMethods->xTruncate(REAL(file), size); }
static int f_sync(sqlite3_file *file, int flags) {
    if (should_fail(FAULT_SYNC)) return SQLITE_IOERR_FSYNC;
    return REAL(file)->pMethods->xSync(REAL(file), flags);
}
static int f_file_size(sqlite3_file *file, sqlite3_int64 *size) { return REAL(file)->pMethods->xFileSize(REAL(file), size); }
static int f_lock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xLock(REAL(file), level); }
static int f_unlock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xUnlock(REAL(file), level); }
static int f_check_reserved(sqlite3_file *file, int *result) { return REAL(file)->pMethods->xCheckReservedLock(REAL(file), result); }
static int f_file_control(sqlite3_file *file, int op, void *arg) { return REAL(file)->pMethods->xFileControl(REAL(file), op, arg); }
static int f_sector_size(sqlite3_file *file) { return REAL(file)->pMethods->xSectorSize(REAL(file)); }
static int f_device(sqlite3_file *file) { return REAL(file)->pMethods->xDeviceCharacteristics(REAL(file)); }
static int f_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) { return REAL(file)->pMethods->xShmMap(REAL(file), page, size, extend, out); }
static int f_shm_lock(sqlite3_file *file, int offset, int n, int flags) { return REAL(file)->pMethods->xShmLock(REAL(file), offset, n, flags); }
static void f_shm_barrier(sqlite3_file *file) { REAL(file)->pMethods->xShmBarrier(REAL(file)); }
static int f_shm_unmap(sqlite3_file *file, int delete_flag) { return REAL(file)->pMethods->xShmUnmap(REAL(file), delete_flag); }
/* No memory-mapped reads: every read goes through f_read, where faults are injected. */
static int f_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) { (void)file; (void)offset; (void)amount; *out = 0; return SQLITE_OK; }
static int f_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) { (void)file; (void)offset; (void)page; return SQLITE_OK; }

static const sqlite3_io_methods fault_io = {
    3, f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved,
    f_file_control, f_sector_size, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch, f_unfetch,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *fault = (FaultFile *)file;
    fault->real = (sqlite3_file *)&fault[1];
    memset(fault->real, 0, (size_t)original->szOsFile);
    int rc = original->xOpen(original, name, fault->real, flags, out_flags);
    /* SQLite calls xClose only when pMethods is set: set it only for a file that opened. */
    fault->base.pMethods = (rc == SQLITE_OK && fault->real->pMethods) ? &fault_io : 0;
    return rc;
}
static int f_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) { (void)vfs; return original->xDelete(original, name, sync_dir); }
static int f_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) { (void)vfs; return original->xAccess(original, name, flags, out); }
static int f_full_path(sqlite3_vfs *vfs, const char *name, int size, char *out) { (void)vfs; return original->xFullPathname(original, name, size, out); }

int fault_vfs_register(void) {
    if (original) return SQLITE_OK;
    original = sqlite3_vfs_find(0);
    if (!original) return SQLITE_ERROR;
    fault_vfs = *original;
    fault_vfs.iVersion = original->iVersion < 3 ? original->iVersion : 3;
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + original->szOsFile;
    fault_vfs.zName = "ocd-fault";
    fault_vfs.pNext = 0;
    fault_vfs.xOpen = f_open;
    fault_vfs.xDelete = f_delete;
    fault_vfs.xAccess = f_access;
    fault_vfs.xFullPathname = f_full_path;
    return sqlite3_vfs_register(&fault_vfs, 1);
}

void fault_vfs_arm(int kind, long n) {
    atomic_store(&fired, 0);
    atomic_store(&countdown, n);
    atomic_store(&armed_kind, n > 0 ? kind : -1);
}

void fault_vfs_disarm(void) { atomic_store(&armed_kind, -1); }

int fault_vfs_fired(void) { return atomic_load(&fired); }
