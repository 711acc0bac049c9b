import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import OpenCoreDataCore
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
/// A session is used by one thread at a time (the pool lends it); it keeps no other state than
/// its connection, which postgres-nio makes safe to share.
package final class PostgreSQLSession: Sendable {
    private let connection: PostgresConnection
    private let logger: Logger
    /// Where the session is connected (without the password), for messages.
    package let target: String

    private init(connection: PostgresConnection, logger: Logger, target: String) {
        self.connection = connection
        self.logger = logger
        self.target = target
    }

    /// The event loops every session runs on.
    static var eventLoops: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// Connects to the server and database of `url`; throws 134080 when it cannot.
    package static func connect(_ url: PostgreSQLStoreURL, timeout: TimeAmount = .seconds(10)) throws -> PostgreSQLSession {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch url.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw CoreDataError(.persistentStoreOpen, "TLS for the PostgreSQL store \(url.description) could not be set up: \(error). Pass tls=disable for a server on a trusted network.")
        }
        var configuration = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: tls)
        configuration.options.connectTimeout = timeout
        let logger = Logger(label: "OpenCoreData.PostgreSQL", factory: { _ in SwiftLogNoOpLogHandler() })
        let connection = try wait(for: PostgresConnection.connect(on: eventLoops.next(), configuration: configuration, id: 0, logger: logger),
                                  doing: "connect to \(url.description)", code: .persistentStoreOpen)
        return PostgreSQLSession(connection: connection, logger: logger, target: url.description)
    }

    /// Runs one statement with `arguments` bound to `$1`, `$2`, …; returns its rows (values as
    /// ``PostgreSQLValues`` reads them) and how many rows it changed.
    @discardableResult
    package func execute(_ sql: String, _ arguments: [ManagedValue] = []) throws -> (rows: [[ManagedValue]], changed: Int) {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try PostgreSQLValues.bind(argument, into: &bindings) }
        let result = try Self.wait(for: connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger),
                                   doing: "run \(Self.excerpt(sql)) on \(target)", code: .persistentStoreOperation)
        let rows = try result.rows.map { row in try row.map { try PostgreSQLValues.value(of: $0) } }
        return (rows, result.metadata.rows ?? 0)
    }

    /// The first value of every row `sql` returns, as integers (keys): a row whose first value
    /// is not an integer is left out.
    package func integers(_ sql: String, _ arguments: [ManagedValue] = []) throws -> [Int64] {
        try execute(sql, arguments).rows.compactMap { row in
            if case .integer(let value)? = row.first { value } else { nil }
        }
    }

    /// Whether `schema` has the table `table` (a lower-case name: PostgreSQL folds the bare names
    /// the stores create), as SQLite's `tableExists` answers for a file.
    package func tableExists(_ table: String, inSchema schema: String) throws -> Bool {
        let rows = try execute("SELECT to_regclass($1) IS NOT NULL", [.string(PostgreSQLSQL.quoted(schema) + "." + table)]).rows
        if case .bool(true)? = rows.first?.first { return true }
        return false
    }

    /// Runs `body` in a transaction (begun by `begin`, e.g. with an isolation level): committed
    /// when it returns, rolled back when it throws.
    @discardableResult
    package func transaction<T>(begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
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
        let context = connection.addListener(channel: channel) { _, notification in handler(notification.payload) }
        do {
            try execute("LISTEN " + PostgreSQLSQL.quoted(channel))
        } catch {
            context.stop()
            throw error
        }
        return PostgreSQLListener(context: context, session: self, channel: channel)
    }

    /// Sends `payload` to every listener of `channel` (delivered when the caller's transaction,
    /// if any, commits).
    package func notify(_ channel: String, payload: String) throws {
        try execute("SELECT FROM pg_notify($1, $2)", [.string(channel), .string(payload)])
    }

    /// Closes the connection; the session is unusable afterwards.
    package func close() {
        guard !connection.isClosed else { return }
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            // Cannot wait here (see `wait`): the close goes out and completes on its own.
            let closing: EventLoopFuture<Void> = connection.close()
            _ = closing
        } else {
            _ = try? Self.wait(for: connection.close(), doing: "close the connection to \(target)", code: .persistentStoreOperation)
        }
    }

    /// A session nobody closed (a coordinator released without removing its store) closes its
    /// connection as it goes: postgres-nio requires every connection to be closed.
    deinit { close() }

    /// Whether the connection is closed (by `close()`, the server, or the network).
    package var isClosed: Bool { connection.isClosed }

    // MARK: - Waiting

    /// The result of the future `start` makes, waited for on the calling thread. Refused on an
    /// event loop thread before any work is sent.
    static func wait<T: Sendable>(for start: @autoclosure () -> EventLoopFuture<T>, doing what: String, code: CoreDataError.Code) throws -> T {
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw CoreDataError(.persistentStoreOperation,
                                "A PostgreSQL store was called on a SwiftNIO event loop thread, where waiting for its answer would block the loop (or deadlock): call it from a context's queue (perform) or another thread.")
        }
        do {
            return try start().wait()
        } catch let error as PSQLError {
            var failure = CoreDataError(code, "Could not \(what): \(PostgreSQLValues.describe(error))")
            failure.sqlState = error.serverInfo?[.sqlState]
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
    private let session: PostgreSQLSession
    private let channel: String

    init(context: PostgresListenContext, session: PostgreSQLSession, channel: String) {
        self.context = context
        self.session = session
        self.channel = channel
    }

    /// Stops the handler and tells the server to stop sending.
    package func stop() {
        context.stop()
        _ = try? session.execute("UNLISTEN " + PostgreSQLSQL.quoted(channel))
    }
}
