import Foundation
import OpenCoreDataCore

/// A query generation's view of one PostgreSQL store: a connection of its own (outside the pool)
/// holding a `REPEATABLE READ READ ONLY` transaction, so that every read through it sees the
/// schema as it was at the transaction's first statement, whatever is committed since. Ended (and
/// the connection closed) when the generation lets go of it.
///
/// PostgreSQL keeps the row versions this snapshot may still read (vacuum waits for it): the
/// generation ends it as soon as no context or token refers to it.
// @unchecked Sendable: the session is used only under `lock` (contexts aligned on one generation
// read from their own queues).
final class PostgreSQLReadSnapshot: @unchecked Sendable {
    private let session: PostgreSQLSession
    private let lock = NSLock()

    private init(session: PostgreSQLSession) {
        self.session = session
    }

    /// A snapshot of the store `pool` connects to, as it is now.
    static func open(_ pool: PostgreSQLSessionPool) throws -> PostgreSQLReadSnapshot {
        let session = try pool.connect()
        do {
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            // The snapshot is taken by the transaction's first statement.
            try session.execute("SELECT 1")
        } catch {
            session.close()
            throw error
        }
        return PostgreSQLReadSnapshot(session: session)
    }

    /// Runs a read on the snapshot.
    func read<T>(_ body: (PostgreSQLSession) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(session)
    }

    deinit {
        _ = try? session.execute("COMMIT")
        session.close()
    }
}
