import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import OpenCoreDataCore
import OpenCoreDataSQL
import PostgresNIO

/// One PostgreSQL connection used synchronously, as a store's callers — context queues that wait
/// for their rows — need it.
///
/// **How waiting works without blocking an event loop.** postgres-nio runs the connection on an
/// event loop of a shared group; every call here hands the work to that loop and waits *on the
/// calling thread* for the result. Nothing here runs on an event loop except postgres-nio's own
/// handlers, so a loop is never blocked by a waiting caller. The one way to deadlock would be to
/// wait on an event loop thread (the loop would wait for itself, or a neighbour loop would stall):
/// such a call is refused with an error (134070) instead. Calls from Dispatch queues (context
/// queues), threads, and the cooperative pool (whose waits are short, bounded by the statement)
/// are fine.
///
/// **No call waits for ever.** The server cancels a statement after the URL's
/// `statement_timeout`; a server that has not answered ``answerGrace`` after that (stopped without
/// a word, partitioned away) has the connection closed under the waiting call, which throws
/// 134090. A closed connection stays closed: the pool drops it and connects anew.
///
/// A session is used by one thread at a time (the pool lends it); it keeps no other state than
/// its connection, which postgres-nio makes safe to share.
package final class PostgreSQLSession: Sendable {
    private let connection: PostgresConnection
    /// The TCP connection under `connection` (opened here, with the URL's keepalive).
    private let channel: any Channel
    private let logger: Logger
    /// Where the session is connected (without the password), for messages.
    package let target: String
    /// How long a call waits for the server's answer before closing the connection; nil for ever
    /// (`statement_timeout=0`).
    private let deadline: TimeAmount?
    /// Set when this side starts closing the connection (a deadline passed, `closeWithoutWaiting`):
    /// the connection reports itself closed only once the close completed on its event loop, and
    /// until then the session must not be lent again.
    private let abandoned = Locked(false)
    /// Whether a statement was answered since the pool last lent the session (`lend()`): a
    /// session whose connection turns out dead before any answer cost its borrower nothing.
    private let answeredSinceLent = Locked(false)

    /// How long after the server's own statement timeout an answer may still come (the
    /// cancellation's round trip, a busy server) before the path is taken for dead.
    package static let answerGrace: TimeAmount = .seconds(5)

    private init(connection: PostgresConnection, channel: any Channel, logger: Logger, target: String, deadline: TimeAmount?) {
        self.connection = connection
        self.channel = channel
        self.logger = logger
        self.target = target
        self.deadline = deadline
    }

    /// The event loops every session runs on.
    static var eventLoops: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// Connects to the server and database of `url`, with the URL's statement timeout; throws
    /// 134080 when it cannot.
    package static func connect(_ url: PostgreSQLStoreURL) throws -> PostgreSQLSession {
        let tls: PostgresConnection.Configuration.TLS
        do {
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            if let authorities = url.tlsCAFile { tlsConfiguration.trustRoots = .file(authorities) }
            switch url.tls {
            case .disable: tls = .disable
            case .prefer:
                // As libpq's `prefer`: encrypted when the server offers it, its certificate not
                // checked (unless tls_ca names the authorities) — the default for a server on this
                // machine, where Debian's packages serve a self-signed certificate; verifying it
                // refused every connection.
                if url.tlsCAFile == nil { tlsConfiguration.certificateVerification = .none }
                tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require: tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
        } catch {
            throw CoreDataError(.persistentStoreOpen, """
                TLS for the PostgreSQL store \(url.description) could not be set \
                up\(url.tlsCAFile.map { " with the authorities in \($0)" } ?? ""): \(error). For a server \
                whose certificate a private authority signed, name its PEM file with tls_ca=.
                """)
        }
        // The TCP connection is opened here (postgres-nio's own connect sets no socket options: no
        // keepalive), then handed over; the connect timeout bounds both parts together.
        let started = NIODeadline.now()
        let channel = try openChannel(url)
        let refusedCleartext = Locked(false)
        if !url.allowsCleartextPassword {
            // Ahead of postgres-nio's handlers (and of the TLS handler it adds before its own).
            let requestsTLS = url.tls != .disable
            do {
                try channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(CleartextPasswordGuard(requestsTLS: requestsTLS, refused: refusedCleartext),
                                                                   position: .first)
                }.wait()
            } catch {
                channel.close(promise: nil)
                throw CoreDataError(.persistentStoreOpen, "Could not connect to \(url.description): \(error)")
            }
        }
        var configuration = PostgresConnection.Configuration(establishedChannel: channel, tls: tls, username: url.user, password: url.password,
                                                             database: url.database)
        // The name the server's certificate is checked against (and sent for SNI), as postgres-nio
        // does for a host it connects to itself: the host, unless it is an IP address.
        configuration.options.tlsServerName = Self.isIPAddress(url.host) ? nil : url.host
        configuration.options.connectTimeout = max(.seconds(Int64(url.connectTimeout)) - (NIODeadline.now() - started), .milliseconds(1))
        // In the startup message: in force from the first statement, without a round trip, and
        // over the role's or database's defaults (the URL's timeouts: see PostgreSQLStoreURL). A save's rules assume READ COMMITTED (each
        // statement sees the rows committed before it; a conflict is a row whose Z_OPT moved, not
        // a serialisation failure at COMMIT after another store's part was written), and writes
        // must not be refused by a server that makes transactions read-only by default; reads
        // that need a snapshot say so in their BEGIN.
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", String(url.statementTimeout * 1000)),
            ("lock_timeout", String(url.lockTimeout * 1000)),
            ("idle_in_transaction_session_timeout", String(url.idleInTransactionTimeout * 1000)),
            ("default_transaction_isolation", "read committed"),
            ("default_transaction_read_only", "off"),
        ]
        let logger = Logger(label: "OpenCoreData.PostgreSQL", factory: { _ in SwiftLogNoOpLogHandler() })
        // postgres-nio's connectTimeout bounds the whole connection, TLS and authentication
        // included: a path that accepts it and then stays silent ends there too.
        let connection: PostgresConnection
        do {
            connection = try wait(for: PostgresConnection.connect(on: channel.eventLoop, configuration: configuration, id: 0, logger: logger),
                                  doing: "connect to \(url.description)", code: .persistentStoreOpen)
        } catch {
            channel.close(promise: nil)     // a handshake that failed leaves no socket behind
            if refusedCleartext.withLock({ $0 }) {
                throw CoreDataError(.persistentStoreOpen, """
                    The PostgreSQL server at \(url.description) asked for the password in clear text on a \
                    connection without TLS, so it was not sent: whoever reads the network path would read it, \
                    and a machine in the middle that refused TLS may be the one asking. Connect with TLS \
                    (tls=require, with tls_ca= for a private authority), or have the server use scram-sha-256 \
                    (PostgreSQL's default) for this role; on a network you trust, cleartext_password=allow in \
                    the URL sends it anyway.
                    """)
            }
            throw error
        }
        let deadline = url.statementTimeout == 0 ? nil : .seconds(Int64(url.statementTimeout)) + answerGrace
        return PostgreSQLSession(connection: connection, channel: channel, logger: logger, target: url.description, deadline: deadline)
    }

    /// An open TCP connection to the URL's server, with the URL's keepalive (see
    /// ``PostgreSQLStoreURL``) and connect timeout; throws 134080 when it cannot be opened.
    private static func openChannel(_ url: PostgreSQLStoreURL) throws -> any Channel {
        var bootstrap = ClientBootstrap(group: eventLoops.next()).connectTimeout(.seconds(Int64(url.connectTimeout)))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        if url.keepaliveIdle > 0 {
            bootstrap = bootstrap
                .channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
                .channelOption(keepaliveOption(TCP_KEEPIDLE), value: SocketOptionValue(url.keepaliveIdle))
                .channelOption(keepaliveOption(TCP_KEEPINTVL), value: SocketOptionValue(url.keepaliveInterval))
                .channelOption(keepaliveOption(TCP_KEEPCNT), value: SocketOptionValue(url.keepaliveCount))
        }
        return try wait(for: bootstrap.connect(host: url.host, port: url.port), doing: "connect to \(url.description)", code: .persistentStoreOpen)
    }

    /// A TCP-level socket option (the keepalive timings).
    private static func keepaliveOption(_ name: Int32) -> ChannelOptions.Types.SocketOption {
        ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: name))
    }

    /// Whether `host` is an IPv4 or IPv6 address (not a name to verify a certificate against).
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// The TCP keepalive settings of the session's socket, as the system reports them: idle
    /// seconds, interval seconds, probe count; `nil` when keepalive is off.
    package func keepaliveSettings() throws -> (idle: Int, interval: Int, count: Int)? {
        func read(_ option: ChannelOptions.Types.SocketOption) throws -> Int {
            Int(try Self.wait(for: channel.getOption(option), doing: "read the socket options of \(target)", code: .persistentStoreOperation))
        }
        guard try read(ChannelOptions.socketOption(.so_keepalive)) != 0 else { return nil }
        return (idle: try read(Self.keepaliveOption(TCP_KEEPIDLE)), interval: try read(Self.keepaliveOption(TCP_KEEPINTVL)),
                count: try read(Self.keepaliveOption(TCP_KEEPCNT)))
    }

    /// Runs one statement built as structure: rendered with `$1`, `$2`, … numbered in order and
    /// its values bound in that order; returns its rows (values as ``PostgreSQLValues`` reads
    /// them) and how many rows it changed.
    @discardableResult
    package func execute(_ statement: SQLFragment) throws -> (rows: [[ManagedValue]], changed: Int) {
        let (sql, arguments) = statement.rendered(for: .postgreSQL)
        return try run(sql, arguments)
    }

    /// Runs a statement whose ``SQLFragment/Segment/parameters(_:)`` placeholders take
    /// `parameters`, in order (a statement run once per row).
    @discardableResult
    package func execute(_ statement: SQLFragment, parameters: [ManagedValue]) throws -> (rows: [[ManagedValue]], changed: Int) {
        let (sql, arguments) = statement.rendered(for: .postgreSQL, parameters: parameters)
        return try run(sql, arguments)
    }

    /// Runs a statement rendered before (`SQLFragment.rendered(for: .postgreSQL)`, kept to be run
    /// again) with `arguments` bound to its placeholders in order.
    @discardableResult
    package func execute(rendered sql: String, arguments: [ManagedValue]) throws -> (rows: [[ManagedValue]], changed: Int) {
        try run(sql, arguments)
    }

    /// Runs SQL text made elsewhere that binds no value (DDL whose names are quoted by
    /// ``PostgreSQLSQL``, trigger bodies). Labelled, so that a string literal — with
    /// interpolations too — is always an ``SQLFragment``: an unlabelled `String` overload would
    /// win for an interpolated literal and render the fragments inside it as text (their SQLite
    /// form, values unbound).
    @discardableResult
    package func execute(text sql: String) throws -> (rows: [[ManagedValue]], changed: Int) {
        try run(sql, [])
    }

    /// Whether the server is a standby replaying another's write-ahead log (it takes no writes).
    func isInRecovery() throws -> Bool {
        if case .bool(true)? = try execute("SELECT pg_is_in_recovery()").rows.first?.first { return true }
        return false
    }

    /// How far the server's data reaches in the cluster's write-ahead log (bytes from its start):
    /// on a standby, what it has replayed; on a primary, what it has written.
    func walPosition() throws -> UInt64 {
        let rows = try execute("""
            SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END - '0/0')::bigint
            """).rows
        guard case .integer(let position)? = rows.first?.first else { return 0 }
        return UInt64(max(position, 0))
    }

    /// The furthest write-ahead log position this session has seen its server reach (what a
    /// replica has replayed), so that reads needing no more than it skip the question. Owned by
    /// this lock.
    let knownWALPosition = Locked<UInt64>(0)

    /// The first value of every row `statement` returns, as integers (keys): a row whose first
    /// value is not an integer is left out.
    package func integers(_ statement: SQLFragment) throws -> [Int64] {
        try execute(statement).rows.compactMap { row in
            if case .integer(let value)? = row.first { value } else { nil }
        }
    }

    /// The one place that hands SQL text to postgres-nio: text rendered from an ``SQLFragment``
    /// (or without values), its values bound to `$1`, `$2`, … as ``PostgreSQLValues`` encodes
    /// them. Internal for the codec's tests; the store runs fragments.
    func run(_ sql: String, _ arguments: [ManagedValue]) throws -> (rows: [[ManagedValue]], changed: Int) {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try PostgreSQLValues.bind(argument, into: &bindings) }
        let result = try answer(to: connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger),
                                doing: "run \(Self.excerpt(sql)) on \(target)")
        answeredSinceLent.withLock { $0 = true }
        let rows = try result.rows.map { row in try row.map { try PostgreSQLValues.value(of: $0) } }
        return (rows, result.metadata.rows ?? 0)
    }

    /// Starts a borrower's use of the session (see `hasAnsweredSinceLent`).
    func lend() {
        answeredSinceLent.withLock { $0 = false }
    }

    /// Whether the server answered a statement since `lend()`.
    var hasAnsweredSinceLent: Bool { answeredSinceLent.withLock { $0 } }

    /// Whether `schema` has the table `table` (a lower-case name: PostgreSQL folds the bare names
    /// the stores create), as SQLite's `tableExists` answers for a file.
    package func tableExists(_ table: String, inSchema schema: String) throws -> Bool {
        let rows = try execute("SELECT to_regclass(\(bind: .string(PostgreSQLSQL.quoted(schema) + "." + table))) IS NOT NULL").rows
        if case .bool(true)? = rows.first?.first { return true }
        return false
    }

    /// Lifts the URL's `idle_in_transaction_session_timeout` until the end of the open transaction,
    /// for one that waits for the client on purpose (a query generation's snapshot, a save's part
    /// held open while another store's part is written).
    /// A query: as a transaction's first statement, it takes a `REPEATABLE READ` snapshot.
    package func waitsForClient() throws {
        try execute("SELECT set_config('idle_in_transaction_session_timeout', '0', true)")
    }

    /// Runs `body` in a transaction (begun by `begin`, e.g. with an isolation level): committed
    /// when it returns, rolled back when it throws.
    @discardableResult
    package func transaction<T>(begin: SQLFragment = "BEGIN", _ body: () throws -> T) throws -> T {
        try execute(begin)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Calls `handler` (on an event loop: it must return quickly) with the payload of every
    /// notification on `channel`, from any session on any machine, until the returned listener
    /// is stopped or the session closed. The channel is an identifier (it is quoted).
    package func listen(_ channel: String, handler: @escaping @Sendable (String) -> Void) throws -> PostgreSQLListener {
        // postgres-nio's `stop()` takes effect later, on the event loop; until then notifications
        // still arrive. The flag, set at once by `PostgreSQLListener.stop()`, drops them.
        let stopped = Locked(false)
        let context = connection.addListener(channel: channel) { _, notification in
            if !stopped.withLock({ $0 }) { handler(notification.payload) }
        }
        do {
            try execute("LISTEN \(quoted: channel)" as SQLFragment)
        } catch {
            context.stop()
            throw error
        }
        return PostgreSQLListener(context: context, stopped: stopped)
    }

    /// Sends `payload` to every listener of `channel` (delivered when the caller's transaction,
    /// if any, commits).
    package func notify(_ channel: String, payload: String) throws {
        try execute("SELECT FROM pg_notify(\(bind: .string(channel)), \(bind: .string(payload)))")
    }

    /// Closes the connection; the session is unusable afterwards.
    package func close() {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            // Cannot wait here (see `wait`): the close goes out and completes on its own.
            closeWithoutWaiting()
        } else if !connection.isClosed {
            _ = try? Self.wait(for: connection.close(), doing: "close the connection to \(target)", code: .persistentStoreOperation)
        }
    }

    /// Starts closing the connection and returns at once: a server that no longer answers cannot
    /// hold the caller up.
    package func closeWithoutWaiting() {
        abandoned.withLock { $0 = true }
        guard !connection.isClosed else { return }
        let closing: EventLoopFuture<Void> = connection.close()
        _ = closing
    }

    /// Calls `callback` (on an event loop: it must return quickly) once the connection has
    /// closed, whoever closed it.
    package func whenClosed(_ callback: @escaping @Sendable () -> Void) {
        connection.closeFuture.whenComplete { _ in callback() }
    }

    /// A session nobody closed (a coordinator released without removing its store) closes its
    /// connection as it goes: postgres-nio requires every connection to be closed.
    deinit { close() }

    /// Whether the connection is closed (by `close()`, the server, or the network) or closing.
    package var isClosed: Bool { connection.isClosed || abandoned.withLock { $0 } }

    // MARK: - Waiting

    /// The server's answer to the request `start` sends, waited for until the session's deadline:
    /// past it the connection is closed and the call throws 134090, whether or not the request
    /// itself ever ends (postgres-nio leaves a request sent on a connection that closed under it
    /// unanswered: it would be waited for for ever). The wait is a semaphore's, with a timeout:
    /// no timer on the event loop, so a statement costs no more than an unbounded wait.
    private func answer<T: Sendable>(to start: @autoclosure () -> EventLoopFuture<T>, doing what: String) throws -> T {
        guard !isClosed else {
            throw CoreDataError(.persistentStoreOperation, """
                Could not \(what): the connection was closed (a server restart, a network failure); nothing \
                was sent. Try again: the next attempt connects anew.
                """)
        }
        guard let deadline else { return try Self.wait(for: start(), doing: what, code: .persistentStoreOperation) }
        try Self.refuseOnEventLoop()
        let answered = DispatchSemaphore(value: 0)
        // Written on the event loop before `answered` is signalled, read after.
        let outcome = Locked<Result<T, any Error>?>(nil)
        start().whenComplete { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + .nanoseconds(Int(deadline.nanoseconds))) == .success,
              let result = outcome.withLock({ $0 }) else {
            closeWithoutWaiting()
            throw CoreDataError(.persistentStoreTimeout,
                                """
                                    Could not \(what): the server did not answer within \
                                    \(deadline.nanoseconds / 1_000_000_000) s (statement_timeout plus \
                                    \(Self.answerGrace.nanoseconds / 1_000_000_000) s), so the connection was \
                                    closed (the server rolls back a transaction left open; one whose COMMIT \
                                    was on its way may have committed). Check that the server is up and \
                                    reachable; a longer statement needs a larger statement_timeout= in the \
                                    store URL.
                                    """)
        }
        return try Self.translatingErrors(doing: what, code: .persistentStoreOperation) { try result.get() }
    }

    /// The result of the future `start` makes, waited for on the calling thread. Refused on an
    /// event loop thread before any work is sent.
    static func wait<T: Sendable>(for start: @autoclosure () -> EventLoopFuture<T>, doing what: String, code: CoreDataError.Code) throws -> T {
        try refuseOnEventLoop()
        return try translatingErrors(doing: what, code: code) { try start().wait() }
    }

    /// Waiting on an event loop thread would block the loop (or deadlock): refused.
    private static func refuseOnEventLoop() throws {
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw CoreDataError(.persistentStoreOperation,
                                """
                                    A PostgreSQL store was called on a SwiftNIO event loop thread, where \
                                    waiting for its answer would block the loop (or deadlock): call it from a \
                                    context's queue (perform) or another thread.
                                    """)
        }
    }

    /// `body`'s result, its postgres-nio errors turned into ``CoreDataError``s with `code`.
    private static func translatingErrors<T>(doing what: String, code: CoreDataError.Code, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PSQLError {
            let sqlState = error.serverInfo?[.sqlState]
            var failure = switch sqlState {
            case "57014":   // the server's statement_timeout cancelled it
                CoreDataError(.persistentStoreTimeout, """
                    Could not \(what): the server cancelled it (it ran longer than the store URL's \
                    statement_timeout, or an administrator cancelled it). Raise statement_timeout= for longer \
                    statements.
                    """)
            case "55P03":   // lock_timeout: another session held a row or table it needed
                CoreDataError(.persistentStoreTimeout, """
                    Could not \(what): another session held a row or table it needed for longer than the lock \
                    timeout (lock_timeout= in the store URL), so nothing was written. Try again once that session's transaction ends \
                    (a long batch, a migration), or raise lock_timeout=.
                    """)
            default:
                CoreDataError(code, "Could not \(what): \(PostgreSQLValues.describe(error))")
            }
            failure.sqlState = sqlState
            throw failure
        } catch {
            throw CoreDataError(code, "Could not \(what): \(error)")
        }
    }

    private static func excerpt(_ sql: String) -> String {
        sql.count <= 80 ? sql : String(sql.prefix(77)) + "…"
    }
}

/// A subscription to a notification channel (``PostgreSQLSession/listen(_:handler:)``).
package final class PostgreSQLListener: Sendable {
    private let context: PostgresListenContext
    private let stopped: Locked<Bool>

    init(context: PostgresListenContext, stopped: Locked<Bool>) {
        self.context = context
        self.stopped = stopped
    }

    /// Stops the handler: a notification that arrives after this returns is not delivered (one
    /// being delivered at that moment finishes). The server keeps sending until the session is
    /// closed (which ``PostgreSQLChangeWatcher`` does next) or `UNLISTEN` is sent: nothing waits
    /// on the network here.
    package func stop() {
        stopped.withLock { $0 = true }
        context.stop()
    }
}
