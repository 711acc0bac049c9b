import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Where a PostgreSQL store lives, read from its URL:
/// `postgres://user[:password]@host[:port]/database?schema=name&pool=n&generations=n&tls=mode&tls_ca=path`
/// `&cleartext_password=allow&statement_timeout=s&lock_timeout=s&idle_in_transaction_session_timeout=s`
/// `&connect_timeout=s&keepalives_idle=s&keepalives_interval=s&keepalives_count=n&replicas=host:port,host:port`.
///
/// - `host` defaults to `localhost` and `port` to 5432; `postgresql://` is accepted too.
/// - `schema` (default `public`) holds the store's tables: several stores share one database in
///   several schemas. Letters, digits and `_`, not starting with a digit, at most 63 bytes.
/// - `pool` is how many connections the store keeps (1–64, default 4).
/// - `generations` is how many query generations may be open on the store at once (1–64,
///   default 16): each holds a connection of its own, outside the pool, in a transaction the
///   server keeps old row versions for.
/// - `tls` is `disable`, `prefer` (TLS when the server offers it, its certificate not checked, as
///   libpq's `prefer`, unless `tls_ca` is given) or `require` (TLS, with the server's certificate
///   verified against the system's trusted authorities or `tls_ca`, and its name against `host`:
///   libpq's `verify-full`). The default is `require`, except for a loopback host (`localhost`,
///   `127.x.x.x`, `::1`), where it is `prefer`: on a network, `prefer` lets whoever sits on the
///   path answer "no TLS" and read the password.
/// - `tls_ca` is a PEM file of the authorities to trust instead (a private CA).
/// - `cleartext_password`: a server that asks for the password in clear text (its `password`
///   authentication method) over a connection without TLS does not get it — the connection is
///   refused with 134080 — since whoever reads the path reads the password, and a machine in the
///   middle that answered "no TLS" may be the one asking. `cleartext_password=allow` sends it
///   anyway (a network you trust). Over TLS, and with `scram-sha-256` (PostgreSQL's default),
///   the password is safe either way.
/// - `statement_timeout` bounds every call, in seconds (default 30; 0 for none): the server
///   cancels a statement that runs longer, and a server that has not answered 5 s after that —
///   stopped, partitioned away, behind a dead network path — has its connection closed, so the
///   call throws 134090 instead of waiting for ever. A save or batch that must run longer needs a
///   larger value.
/// - `lock_timeout` bounds, in seconds, how long a statement waits for a row or table another
///   session holds (default 0: no limit of its own, the statement timeout bounds the wait). The
///   statement then fails having written nothing, with 134090 naming the lock: a service that
///   would rather fail a save at once under contention than wait says `lock_timeout=1` and keeps
///   a long `statement_timeout` for its large saves.
/// - `idle_in_transaction_session_timeout` (default 60; 0 for none): the server ends a session
///   whose transaction has waited that many seconds for the client's next statement, releasing
///   the rows and tables it holds. A store never leaves a transaction waiting on purpose, so this
///   only fires for a client that stopped mid-save — a process frozen (a debugger, `SIGSTOP`, a
///   paused virtual machine) or cut off behind a partition the server does not see — whose locks
///   would otherwise stop every other writer of those rows until keepalive or a restart ends it.
///   The transactions that do wait are exempt: a query generation's snapshot (held while contexts
///   are pinned to it) and a save across several stores while the next store's part is written.
///   (A migration copies its rows on its own session, `INSERT … SELECT`, so it is not idle: a
///   client frozen mid-migration, the lock on the whole schema in hand, is ended too.)
/// - `connect_timeout` bounds opening a connection, in seconds (default 10).
/// - `keepalives_idle`, `keepalives_interval`, `keepalives_count` (libpq's names): TCP keepalive
///   on every connection — after `keepalives_idle` seconds without traffic (default 30) the
///   system probes the server every `keepalives_interval` seconds (default 10) and closes the
///   connection after `keepalives_count` unanswered probes (default 3). An idle connection to a
///   server that vanished without a word (powered off, partitioned away) — a pooled session, or the
///   one that listens for other processes' saves — is then found dead within about a minute
///   instead of the system's two hours, and the listener reconnects. `keepalives_idle=0` turns
///   keepalive off.
/// - `replicas`: hot standbys of the server (streaming replication), `host[:port]` separated by
///   commas (port 5432 by default). Fetches, counts and dictionary fetches read from the first
///   one that answers, once it has replayed this store's last save (read-your-writes: a
///   coordinator never reads past its own saves; a standby that has not caught up within 0.2 s,
///   or that fails, leaves the read to the primary). Everything else — saves, batches, faults,
///   history, query generations, change notifications — goes to the primary. They are also the
///   failover candidates: when the primary cannot be reached or no longer takes writes, a
///   connection for writing goes to the first of them that does (a promoted standby). Another
///   process's save reaches reads from a standby once the standby replays it.
///
/// The password is never published: a store's ``/OpenCoreDataCore/PersistentStore/url`` and its
/// remote-change notifications carry the URL without it. A URL without a password uses the one
/// last given in this process for the same user, host, port and database, so the published URL
/// opens the store again here (`knownPasswords`).
///
/// Anything else in the URL — another scheme, a missing user or database, an unknown parameter —
/// is refused with a ``/OpenCoreDataCore/CoreDataError`` (134000) naming it: a typo must not
/// silently open another store.
package struct PostgreSQLStoreURL: Sendable, Equatable {
    /// How the connection is encrypted.
    package enum TLSMode: String, Sendable, CaseIterable {
        case disable, prefer, require
    }

    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    package var schema: String
    package var poolSize: Int
    /// How many query generations may hold a snapshot of the store at once.
    package var generations: Int
    package var tls: TLSMode
    /// A PEM file of the certificate authorities that sign the server's certificate.
    package var tlsCAFile: String?
    /// Whether the password may go in clear text over a connection without TLS.
    package var allowsCleartextPassword: Bool
    /// The server's limit on one statement, in seconds; 0 for none.
    package var statementTimeout: Int
    /// The server's limit on waiting for a lock, in seconds; 0 for none of its own.
    package var lockTimeout: Int
    /// The server's limit on a transaction waiting for the client, in seconds; 0 for none.
    package var idleInTransactionTimeout: Int
    /// How long opening a connection may take, in seconds.
    package var connectTimeout: Int
    /// Seconds without traffic before TCP keepalive probes start; 0 for no keepalive.
    package var keepaliveIdle: Int
    /// Seconds between keepalive probes.
    package var keepaliveInterval: Int
    /// Unanswered probes after which the system closes the connection.
    package var keepaliveCount: Int
    /// Hot standbys to read from, and to fail over to.
    package var replicas: [Server]

    /// One server: a host and its port.
    package struct Server: Sendable, Equatable, CustomStringConvertible {
        package var host: String
        package var port: Int

        package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The server the URL names first (the primary).
    package var primary: Server { Server(host: host, port: port) }

    /// The same store on `server` (another member of the cluster).
    package func at(_ server: Server) -> PostgreSQLStoreURL {
        var url = self
        url.host = server.host
        url.port = server.port
        return url
    }

    package static let defaultPort = 5432
    package static let defaultPoolSize = 4
    package static let poolSizes = 1...64
    package static let defaultGenerations = 16
    package static let defaultStatementTimeout = 30
    package static let defaultConnectTimeout = 10
    package static let defaultIdleInTransactionTimeout = 60
    package static let defaultKeepaliveIdle = 30
    package static let defaultKeepaliveInterval = 10
    package static let defaultKeepaliveCount = 3
    /// The longest timeout a URL may give: a day.
    package static let longestTimeout = 86_400

    package init(_ url: URL) throws(CoreDataError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw Self.invalid(url, "it is not a URL")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw Self.invalid(url, "its scheme is not postgres://")
        }
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        port = components.port ?? Self.defaultPort
        guard (1...65535).contains(port) else { throw Self.invalid(url, "the port \(port) is not between 1 and 65535") }
        guard let user = components.user, !user.isEmpty else {
            throw Self.invalid(url, "it names no user: write postgres://user@\(host)/database")
        }
        self.user = user
        password = components.password
        let path = components.path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.count == 1 else {
            throw Self.invalid(url,
                               path.isEmpty ? "it names no database: write postgres://user@\(host)/database" : "its path is not one database name")
        }
        database = String(path[0])
        schema = "public"
        poolSize = Self.defaultPoolSize
        generations = Self.defaultGenerations
        tls = Self.isLoopback(host) ? .prefer : .require
        tlsCAFile = nil
        allowsCleartextPassword = false
        statementTimeout = Self.defaultStatementTimeout
        lockTimeout = 0
        idleInTransactionTimeout = Self.defaultIdleInTransactionTimeout
        connectTimeout = Self.defaultConnectTimeout
        keepaliveIdle = Self.defaultKeepaliveIdle
        keepaliveInterval = Self.defaultKeepaliveInterval
        keepaliveCount = Self.defaultKeepaliveCount
        replicas = []
        /// A parameter's value as whole seconds from `lowest` to a day.
        func seconds(_ name: String, _ value: String, from lowest: Int) throws(CoreDataError) -> Int {
            guard let seconds = Int(value), (lowest...Self.longestTimeout).contains(seconds) else {
                throw Self.invalid(url, "\(name) is '\(value)', not a whole number of seconds from \(lowest) to \(Self.longestTimeout)")
            }
            return seconds
        }
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "schema":
                guard Self.isIdentifier(value) else {
                    throw Self.invalid(url, """
                        the schema '\(value)' is not a name of letters, digits and _ (not starting with a \
                        digit, at most 63 bytes)
                        """)
                }
                schema = value
            case "pool":
                guard let size = Int(value), Self.poolSizes.contains(size) else {
                    throw Self.invalid(url, """
                        the pool size '\(value)' is not a number from \(Self.poolSizes.lowerBound) to \
                        \(Self.poolSizes.upperBound)
                        """)
                }
                poolSize = size
            case "generations":
                guard let count = Int(value), Self.poolSizes.contains(count) else {
                    throw Self.invalid(url, """
                        generations is '\(value)', not a number from \(Self.poolSizes.lowerBound) to \
                        \(Self.poolSizes.upperBound)
                        """)
                }
                generations = count
            case "tls":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Self.invalid(url, "tls is '\(value)', not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "tls_ca":
                guard !value.isEmpty else { throw Self.invalid(url, "tls_ca names no file") }
                tlsCAFile = value
            case "cleartext_password":
                guard value == "allow" || value == "refuse" else {
                    throw Self.invalid(url, "cleartext_password is '\(value)', not allow or refuse")
                }
                allowsCleartextPassword = value == "allow"
            case "statement_timeout":
                statementTimeout = try seconds(item.name, value, from: 0)
            case "lock_timeout":
                lockTimeout = try seconds(item.name, value, from: 0)
            case "idle_in_transaction_session_timeout":
                idleInTransactionTimeout = try seconds(item.name, value, from: 0)
            case "connect_timeout":
                connectTimeout = try seconds(item.name, value, from: 1)
            case "keepalives_idle":
                keepaliveIdle = try seconds(item.name, value, from: 0)
            case "keepalives_interval":
                keepaliveInterval = try seconds(item.name, value, from: 1)
            case "keepalives_count":
                guard let count = Int(value), (1...100).contains(count) else {
                    throw Self.invalid(url, "keepalives_count is '\(value)', not a number from 1 to 100")
                }
                keepaliveCount = count
            case "replicas":
                replicas = try value.split(separator: ",").map { item throws(CoreDataError) in
                    guard let server = Self.server(String(item)) else {
                        throw Self.invalid(url, "the replica '\(item)' is not host or host:port (a port from 1 to 65535)")
                    }
                    return server
                }
                guard !replicas.isEmpty else { throw Self.invalid(url, "replicas names no server") }
            default:
                throw Self.invalid(url, """
                    the parameter '\(item.name)' is unknown (schema, pool, generations, tls, tls_ca, \
                    cleartext_password, statement_timeout, lock_timeout, idle_in_transaction_session_timeout, \
                    connect_timeout, keepalives_idle, keepalives_interval, keepalives_count and replicas are known)
                    """)
            }
        }
        if tlsCAFile != nil && tls == .disable {
            throw Self.invalid(url, "tls_ca is given with tls=disable: say tls=require to verify the server with it")
        }
        let credential = "\(user)@\(host):\(port)/\(database)"
        password = Self.knownPasswords.withLock { [password] known in
            guard let password else { return known[credential] }
            known[credential] = password
            return password
        }
    }

    /// The passwords given in URLs parsed in this process, by user, host, port and database: what
    /// a URL without one (a store's published URL) is opened with. Owned by this lock; never
    /// written anywhere.
    private static let knownPasswords = Locked<[String: String]>([:])

    /// `url` without its password: how a store publishes it.
    package static func withoutPassword(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.password != nil else { return url }
        components.password = nil
        return components.url ?? url
    }

    /// The URL without its password, for messages.
    package var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)?schema=\(schema)"
    }

    /// A short name for the database and schema (hexadecimal FNV-1a), from which the store's
    /// notification channel and migration scratch schema are named within PostgreSQL's 63 bytes.
    package var digest: String { SQLDialect.digest(database + "/" + schema) }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func server(_ text: String) -> Server? {
        var host = text, port = defaultPort
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard let number = Int(text[text.index(after: colon)...]) else { return nil }
            host = String(text[..<colon])
            port = number
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        return Server(host: host, port: port)
    }

    /// Whether `host` is this machine, where no one sits between the store and the server.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// Whether `name` is a plain SQL identifier (it is quoted wherever SQL is made all the same).
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63,
              first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    private static func invalid(_ url: URL, _ reason: String) -> CoreDataError {
        // The password never reaches a message.
        var shown = URLComponents(url: url, resolvingAgainstBaseURL: false)
        if shown?.password != nil { shown?.password = "…" }
        return CoreDataError(.persistentStoreInvalidType,
                             """
                                 The PostgreSQL store URL \(shown?.string ?? "given") cannot be used: \
                                 \(reason). The form is \
                                 postgres://user[:password]@host[:port]/database?schema=name&pool=n&generations=n&tls=disable|prefer|require\
                                 &tls_ca=path&cleartext_password=allow|refuse&statement_timeout=seconds&lock_timeout=seconds\
                                 &idle_in_transaction_session_timeout=seconds&connect_timeout=seconds\
                                 &keepalives_idle=seconds&keepalives_interval=seconds&keepalives_count=n&replicas=host:port,….
                                 """)
    }
}
