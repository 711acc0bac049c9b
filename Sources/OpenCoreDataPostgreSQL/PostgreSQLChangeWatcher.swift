import Dispatch
import OpenCoreDataCore

/// A store's subscription to its schema's notification channel (`LISTEN`), kept up for as long as
/// the store is open: when its connection ends — a server restart, a killed backend, a network
/// path closed under it — it connects again (after 0.1 s, doubling up to 5 s between attempts)
/// and then calls the handler once, since saves made while it was away were not announced (the
/// handler reads the store's latest history token, which covers them).
///
/// Notifications are coalesced: while a handler call is waiting to run, further ones add nothing
/// (it reads the latest state when it runs). The handler runs on a Dispatch queue, never on the
/// connection's event loop.
final class PostgreSQLChangeWatcher: Sendable {
    private let channel: String
    private let connect: @Sendable () throws -> PostgreSQLSession
    private let handler: @Sendable () -> Void
    private struct State {
        var session: PostgreSQLSession?
        var listener: PostgreSQLListener?
        /// A handler call is scheduled and has not started.
        var pending = false
        var stopped = false
    }
    /// Owned by this lock; nothing here waits on the network while holding it.
    private let state = Locked(State())

    /// The longest wait between two attempts to listen again.
    static let longestRetryDelay = 5.0

    init(channel: String, connect: @escaping @Sendable () throws -> PostgreSQLSession, handler: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.connect = connect
        self.handler = handler
    }

    /// Listens (on the calling thread); when that fails, keeps trying in the background.
    func start() {
        subscribe(attempt: 0, catchingUp: false)
    }

    /// Stops listening: no handler call starts afterwards, and the connection is closed without
    /// waiting for the server.
    func stop() {
        let (session, listener) = state.withLock { state in
            state.stopped = true
            defer { state.session = nil; state.listener = nil }
            return (state.session, state.listener)
        }
        listener?.stop()
        session?.closeWithoutWaiting()
    }

    private func subscribe(attempt: Int, catchingUp: Bool) {
        guard !state.withLock({ $0.stopped }) else { return }
        let session: PostgreSQLSession
        let listener: PostgreSQLListener
        do {
            session = try connect()
            do {
                listener = try session.listen(channel) { [weak self] _ in self?.announce() }
            } catch {
                session.closeWithoutWaiting()
                throw error
            }
        } catch {
            let delay = min(0.1 * Double(1 << min(attempt, 6)), Self.longestRetryDelay)
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
                self?.subscribe(attempt: attempt + 1, catchingUp: true)
            }
            return
        }
        let kept = state.withLock { state in
            guard !state.stopped else { return false }
            state.session = session
            state.listener = listener
            return true
        }
        guard kept else {
            listener.stop()
            session.closeWithoutWaiting()
            return
        }
        // Called on the event loop when the connection ends for any reason; `stop()` marks the
        // watcher stopped before it closes the session, so only a lost connection resubscribes.
        session.whenClosed { [weak self] in
            guard let self else { return }
            DispatchQueue.global().async { self.subscribe(attempt: 0, catchingUp: true) }
        }
        if catchingUp { announce() }
    }

    private func announce() {
        let schedule = state.withLock { state in
            guard !state.stopped, !state.pending else { return false }
            state.pending = true
            return true
        }
        guard schedule else { return }
        DispatchQueue.global().async { [weak self] in
            guard let self else { return }
            let run = state.withLock { state in
                state.pending = false
                return !state.stopped
            }
            if run { handler() }
        }
    }
}
