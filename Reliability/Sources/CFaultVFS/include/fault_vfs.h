#ifndef FAULT_VFS_H
#define FAULT_VFS_H

/// A test VFS wrapping SQLite's default one: it fails the Nth read, write or sync after being
/// armed, or reports a full disk at the Nth write. Disarmed, it passes everything through.

enum { FAULT_READ = 0, FAULT_WRITE = 1, FAULT_SYNC = 2, FAULT_FULL = 3 };

/// Registers the VFS as SQLite's default (once; later calls do nothing). Returns an SQLite code.
int fault_vfs_register(void);
/// Fails the `n`th operation of `kind` from now on (n ≥ 1), once; `n` = 0 disarms.
void fault_vfs_arm(int kind, long n);
/// Disarms every kind.
void fault_vfs_disarm(void);
/// Whether the armed fault has fired.
int fault_vfs_fired(void);

#endif
