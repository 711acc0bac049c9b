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
    private let pool: PostgreSQLSessionPool
    private let lock = NSLock()

    private init(session: PostgreSQLSession, pool: PostgreSQLSessionPool) {
        self.session = session
        self.pool = pool
    }

    /// A snapshot of the store `pool` connects to, as it is now (one of the URL's
    /// `generations=`).
    static func open(_ pool: PostgreSQLSessionPool) throws -> PostgreSQLReadSnapshot {
        let session = try pool.connectForGeneration()
        do {
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            // The snapshot is taken by the transaction's first statement (not by a SAVEPOINT,
            // which controls the transaction): the one that exempts the transaction from the
            // URL's idle_in_transaction_session_timeout, since it waits between the pinned
            // contexts' reads by design. A read that fails rolls back to the savepoint (see `read`).
            try session.waitsForClient()
            try session.execute("SAVEPOINT ocd_read")
        } catch {
            session.close()
            pool.generationEnded()
            throw error
        }
        return PostgreSQLReadSnapshot(session: session, pool: pool)
    }

    /// Runs a read on the snapshot. A statement that fails aborts PostgreSQL's transaction, and
    /// every later read of every context pinned to the generation would fail with 25P02: the
    /// transaction goes back to the savepoint taken when it began (a read changes nothing, and
    /// the savepoint stays for the next failure), keeping its snapshot.
    func read<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body(session)
        } catch {
            _ = try? session.execute("ROLLBACK TO SAVEPOINT ocd_read")
            throw error
        }
    }

    deinit {
        _ = try? session.execute("COMMIT")
        session.close()
        pool.generationEnded()
    }
}
