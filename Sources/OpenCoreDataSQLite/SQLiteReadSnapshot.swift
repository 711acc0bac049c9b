import CSQLite
import Foundation
import OpenCoreDataCore

/// A query generation's view of one SQLite store: a connection of its own holding a read
/// transaction, so that every read through it sees the database as it was at the transaction's
/// first read (SQLite's WAL read snapshots), whatever is committed since. Ended (and the
/// connection closed) when the generation lets go of it.
///
/// The WAL cannot be checkpointed past this snapshot while it lives: the generation ends it as
/// soon as no context or token refers to it.
// @unchecked Sendable: the connection is used only under `lock` (contexts aligned on one
// generation read from their own queues).
final class SQLiteReadSnapshot: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let lock = NSLock()

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// A snapshot of the store at `path` as it is now; `nil` when the database is not in WAL
    /// mode (then a long read transaction would block writers: reads stay unpinned, as Core
    /// Data's do).
    static func open(path: String, options: SQLiteStoreOptions) throws -> SQLiteReadSnapshot? {
        let connection = try options.readOnlyConnection(to: path)
        let mode = try connection.cachedStatement("PRAGMA journal_mode")
        defer { mode.reset() }
        guard try mode.step(), mode.string(at: 0).lowercased() == "wal" else { return nil }
        // The snapshot is taken by the transaction's first read.
        try connection.execute("BEGIN DEFERRED; SELECT COUNT(*) FROM sqlite_master;")
        return SQLiteReadSnapshot(connection: connection)
    }

    /// Runs a read on the snapshot.
    func read<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }

    deinit {
        try? connection.execute("COMMIT")
    }
}
