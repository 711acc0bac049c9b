import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// The sessions of one store: up to `pool` connections (the URL's `pool=`), each lent to one
/// caller at a time, so that context queues reading and saving at once each wait on their own
/// connection. Every session reads and writes the store's schema (`search_path`).
///
/// A caller holds one session at a time and never asks for a second while holding one, so the
/// pool cannot deadlock on itself; a caller that waits longer than `timeout` for a free session
/// gets an error (134090) instead of waiting forever.
final class PostgreSQLSessionPool: Sendable {
    /// Which servers of the URL a pool connects to.
    enum Role: Sendable {
        /// The one that takes writes: the URL's host or, after a failover, the first of its
        /// `replicas` that does.
        case primary
        /// The URL's `replicas`, for reads.
        case replica
    }

    let url: PostgreSQLStoreURL
    let role: Role
    /// The servers this pool may connect to, in the order they are tried.
    private let candidates: [PostgreSQLStoreURL.Server]
    /// The index in `candidates` of the server the last connection reached: tried first next
    /// time. Owned by this lock.
    private let preferred = Locked(0)
    private let timeout: DispatchTimeInterval
    /// Counts the sessions not lent (idle or not yet connected).
    private let free: DispatchSemaphore
    /// Idle sessions, whether the pool is closed, how many sessions are lent, and how many query
    /// generations hold a connection of their own. Owned by this lock.
    private let state = Locked<(idle: [PostgreSQLSession], closed: Bool, lent: Int, generations: Int)>(([], false, 0, 0))

    init(url: PostgreSQLStoreURL, role: Role = .primary, timeout: DispatchTimeInterval = .seconds(60)) {
        self.url = url
        self.role = role
        candidates = role == .primary ? [url.primary] + url.replicas : url.replicas
        self.timeout = timeout
        free = DispatchSemaphore(value: url.poolSize)
    }

    /// Runs `body` with a session of the pool (connecting one when none is idle).
    func withSession<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T {
        let deadline = DispatchTime.now() + timeout
        guard free.wait(timeout: deadline) == .success else {
            throw CoreDataError(.persistentStoreTimeout, """
                Every one of the \(url.poolSize) connections of the PostgreSQL store \(url.description) stayed \
                busy for 60 s. Raise pool= in the store URL, or look for a transaction that does not end.
                """)
        }
        defer { free.signal() }
        return try run(body, until: deadline)
    }

    /// Runs `body` with a session of the pool if one is free now, else answers `nil` at once
    /// (reads that another pool can serve: a replica's, which the primary serves instead of
    /// waiting for a replica's session).
    func withFreeSession<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T? {
        guard free.wait(timeout: .now()) == .success else { return nil }
        defer { free.signal() }
        return try run(body, until: DispatchTime.now() + timeout)
    }

    /// `body` on a lent session (the pool's count of free sessions already taken for it).
    private func run<T>(_ body: (PostgreSQLSession) throws -> T, until deadline: DispatchTime) throws -> T {
        /// `body` on a lent session, given back whatever happens.
        func attempt(_ session: PostgreSQLSession) throws -> T {
            defer { giveBack(session) }
            return try body(session)
        }
        let (session, reused) = try lend(until: deadline)
        do {
            return try attempt(session)
        } catch let error as CoreDataError where reused && Self.diedIdle(session, failing: error) {
            // The connection died while idle and nobody had noticed (the server restarted, a
            // backend was killed): the borrower's first statement found it. Nothing of the
            // borrower's came back from the server, so `body` starts again, once, on a new
            // connection. (Its first statement is a read, a BEGIN, or a key reservation whose
            // repetition at worst leaves a gap in the keys.)
            return try attempt(try lend(until: deadline, connecting: true).session)
        }
    }

    /// An idle session (`reused`), or a new connection. A server that refuses one more connection
    /// (53300: its `max_connections`, or the role's or database's connection limit, is reached —
    /// other processes share it) while sessions of this pool are lent is waited out: the pool
    /// takes the next of its own sessions to come back, until `deadline`. The pool's size is an
    /// upper bound, the server's room the other.
    private func lend(until deadline: DispatchTime, connecting: Bool = false) throws -> (session: PostgreSQLSession, reused: Bool) {
        while true {
            // A session the server or the network closed while it was idle (a restart, a killed
            // backend) is dropped rather than failing its next caller's statement — released out
            // of the lock, since a session's last release waits for its connection's close.
            let (idle, dropped, othersLent) = try state.withLock { state -> (PostgreSQLSession?, [PostgreSQLSession], Int) in
                if state.closed { throw Self.closedError(url) }
                var dropped: [PostgreSQLSession] = []
                while !connecting, let session = state.idle.popLast() {
                    if !session.isClosed {
                        state.lent += 1
                        return (session, dropped, state.lent)
                    }
                    dropped.append(session)
                }
                return (nil, dropped, state.lent)
            }
            withExtendedLifetime(dropped) {}
            if let idle {
                idle.lend()
                return (idle, true)
            }
            do {
                let session = try connect()
                state.withLock { $0.lent += 1 }
                session.lend()
                return (session, false)
            } catch let error as CoreDataError where error.sqlState == "53300" && othersLent > 0 && DispatchTime.now() < deadline {
                // Room comes back when a session of ours does (or another client leaves).
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Whether `error` is a lent session's connection found dead before it answered anything:
    /// closed now, no answer since it was lent, and no SQLSTATE (the server did not answer) nor a
    /// deadline passed (a silent path, which a second attempt would wait for again).
    private static func diedIdle(_ session: PostgreSQLSession, failing error: CoreDataError) -> Bool {
        session.isClosed && !session.hasAnsweredSinceLent && error.sqlState == nil && error.code != .persistentStoreTimeout
    }

    /// A connection of its own (outside the pool) for a query generation's snapshot, counted
    /// against the URL's `generations=`; give it back with ``generationEnded()``. Beyond the cap
    /// it throws 134090 saying how to let a generation go: pinned contexts that never advance
    /// would otherwise open connections (and hold old row versions on the server) without end.
    func connectForGeneration() throws -> PostgreSQLSession {
        let admitted = state.withLock { state -> Bool in
            guard state.generations < url.generations else { return false }
            state.generations += 1
            return true
        }
        guard admitted else {
            throw CoreDataError(.persistentStoreTimeout, """
                \(url.generations) query generations of the PostgreSQL store \(url.description) are open, each \
                holding a connection and a snapshot on the server; no more are opened. A context pinned with \
                setQueryGenerationFrom(.current) keeps its generation until it saves, merges, is reset or is \
                pinned again, and a kept QueryGenerationToken keeps it too: let them go, or raise generations= \
                in the store URL (up to \(PostgreSQLStoreURL.poolSizes.upperBound)).
                """)
        }
        do {
            return try connect()
        } catch {
            generationEnded()
            throw error
        }
    }

    /// A query generation's connection was closed.
    func generationEnded() {
        state.withLock { $0.generations -= 1 }
    }

    /// A new session set to the store's schema, on the first of the pool's servers that answers
    /// (starting with the one that answered last); for writing, with replicas named, one that is
    /// not in recovery — after a failover, the promoted standby. Throws the last server's error
    /// when none will do.
    func connect() throws -> PostgreSQLSession {
        let first = preferred.withLock { $0 }
        var failure: (any Error)?
        for offset in candidates.indices {
            let index = (first + offset) % candidates.count
            do {
                let session = try PostgreSQLSession.connect(url.at(candidates[index]))
                do {
                    if role == .primary && candidates.count > 1, try session.isInRecovery() {
                        throw CoreDataError(.persistentStoreOpen, """
                            The server \(candidates[index]) of the PostgreSQL store \(url.description) is a standby \
                            (in recovery) and takes no writes, and no other server named in the URL does.
                            """)
                    }
                    try session.execute("SET search_path TO \(quoted: url.schema)" as SQLFragment)
                } catch {
                    session.close()
                    throw error
                }
                if index != first { preferred.withLock { $0 = index } }
                return session
            } catch {
                failure = error
            }
        }
        throw failure ?? CoreDataError(.persistentStoreOpen, "The PostgreSQL store \(url.description) names no server.")
    }

    private func giveBack(_ session: PostgreSQLSession) {
        // A session the server or the network closed is dropped; the next caller connects anew.
        let closed = session.isClosed
        let keep = state.withLock { state -> Bool in
            state.lent -= 1
            guard !state.closed, !closed else { return false }
            state.idle.append(session)
            return true
        }
        if !keep && !closed { session.close() }
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
