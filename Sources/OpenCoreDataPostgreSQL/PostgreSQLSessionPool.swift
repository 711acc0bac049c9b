import Dispatch
import OpenCoreDataCore

/// The sessions of one store: up to `pool` connections (the URL's `pool=`), each lent to one
/// caller at a time, so that context queues reading and saving at once each wait on their own
/// connection. Every session reads and writes the store's schema (`search_path`).
///
/// A caller holds one session at a time and never asks for a second while holding one, so the
/// pool cannot deadlock on itself; a caller that waits longer than `timeout` for a free session
/// gets an error (134090) instead of waiting forever.
final class PostgreSQLSessionPool: Sendable {
    let url: PostgreSQLStoreURL
    private let timeout: DispatchTimeInterval
    /// Counts the sessions not lent (idle or not yet connected).
    private let free: DispatchSemaphore
    /// Idle sessions, and whether the pool is closed. Owned by this lock.
    private let state = Locked<(idle: [PostgreSQLSession], closed: Bool)>(([], false))

    init(url: PostgreSQLStoreURL, timeout: DispatchTimeInterval = .seconds(60)) {
        self.url = url
        self.timeout = timeout
        free = DispatchSemaphore(value: url.poolSize)
    }

    /// Runs `body` with a session of the pool (connecting one when none is idle).
    func withSession<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T {
        guard free.wait(timeout: .now() + timeout) == .success else {
            throw CoreDataError(.persistentStoreTimeout, "Every one of the \(url.poolSize) connections of the PostgreSQL store \(url.description) stayed busy for 60 s. Raise pool= in the store URL, or look for a transaction that does not end.")
        }
        defer { free.signal() }
        // A session the server or the network closed while it was idle (a restart, a killed
        // backend) is dropped rather than failing its next caller's statement — released out of
        // the lock, since a session's last release waits for its connection's close.
        let (idle, dropped) = try state.withLock { state -> (PostgreSQLSession?, [PostgreSQLSession]) in
            if state.closed { throw Self.closedError(url) }
            var dropped: [PostgreSQLSession] = []
            while let session = state.idle.popLast() {
                if !session.isClosed { return (session, dropped) }
                dropped.append(session)
            }
            return (nil, dropped)
        }
        withExtendedLifetime(dropped) {}
        let session = try idle ?? connect()
        session.lend()
        do {
            let result = try body(session)
            giveBack(session)
            return result
        } catch let error as CoreDataError where idle != nil && Self.diedIdle(session, failing: error) {
            // The connection died while idle and nobody had noticed (the server restarted, a
            // backend was killed): the borrower's first statement found it. Nothing of the
            // borrower's came back from the server, so `body` starts again, once, on a new
            // connection. (Its first statement is a read, a BEGIN, or a key reservation whose
            // repetition at worst leaves a gap in the keys.)
            let fresh = try connect()
            fresh.lend()
            do {
                let result = try body(fresh)
                giveBack(fresh)
                return result
            } catch {
                giveBack(fresh)
                throw error
            }
        } catch {
            giveBack(session)
            throw error
        }
    }

    /// Whether `error` is a lent session's connection found dead before it answered anything:
    /// closed now, no answer since it was lent, and no SQLSTATE (the server did not answer) nor a
    /// deadline passed (a silent path, which a second attempt would wait for again).
    private static func diedIdle(_ session: PostgreSQLSession, failing error: CoreDataError) -> Bool {
        session.isClosed && !session.hasAnsweredSinceLent && error.sqlState == nil && error.code != .persistentStoreTimeout
    }

    /// A new session set to the store's schema.
    func connect() throws -> PostgreSQLSession {
        let session = try PostgreSQLSession.connect(url)
        do {
            try session.execute("SET search_path TO " + PostgreSQLSQL.quoted(url.schema))
        } catch {
            session.close()
            throw error
        }
        return session
    }

    private func giveBack(_ session: PostgreSQLSession) {
        // A session the server or the network closed is dropped; the next caller connects anew.
        guard !session.isClosed else { return }
        let keep = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.idle.append(session)
            return true
        }
        if !keep { session.close() }
    }

    /// Closes the idle sessions; sessions lent out are closed when they come back.
    func close() {
        let idle = state.withLock { state -> [PostgreSQLSession] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for session in idle { session.close() }
    }

    static func closedError(_ url: PostgreSQLStoreURL) -> CoreDataError {
        CoreDataError(.persistentStoreOperation, "The PostgreSQL store \(url.description) was removed from its coordinator; add it again.")
    }
}
