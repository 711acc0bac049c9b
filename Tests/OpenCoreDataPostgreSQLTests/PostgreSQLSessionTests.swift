import Foundation
import NIOCore
import NIOPosix
import OpenCoreDataCore
import OpenCoreDataSQL
import Synchronization
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// The synchronous session over postgres-nio, against a real server.
@Suite(.enabled(if: TestServer.isConfigured, TestServer.skipReason), .dedicatedThread)
struct PostgreSQLSessionTests {
    /// An idle connection to a server that vanished without a word is found dead by TCP
    /// keepalive: the URL's timings reach the socket (a dropped path cannot be made on loopback,
    /// whose kernel answers the probes: the settings are what can be checked here).
    @Test func theURLsKeepaliveReachesTheSocket() throws {
        let tuned = try PostgreSQLSession.connect(try TestServer.url(adding: [
            URLQueryItem(name: "keepalives_idle", value: "7"), URLQueryItem(name: "keepalives_interval", value: "2"), URLQueryItem(name: "keepalives_count", value: "4"),
        ]))
        defer { tuned.close() }
        let settings = try #require(try tuned.keepaliveSettings())
        #expect(settings.idle == 7 && settings.interval == 2 && settings.count == 4)
        #expect(try tuned.execute("SELECT 1").rows == [[.integer(1)]])
        let (byDefault, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: byDefault) }
        let defaults = try #require(try byDefault.keepaliveSettings())
        #expect(defaults.idle == 30 && defaults.interval == 10 && defaults.count == 3)
        let without = try PostgreSQLSession.connect(try TestServer.url(adding: [URLQueryItem(name: "keepalives_idle", value: "0")]))
        defer { without.close() }
        #expect(try without.keepaliveSettings() == nil)
    }

    @Test func everyKindOfValueComesBackAsItWasBound() throws {
        let (session, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: session) }
        let table = PostgreSQLSQL.qualified(schema, "ZVALUES")
        try session.execute(text: "CREATE TABLE \(table) (Z_PK bigint PRIMARY KEY, ZINT bigint, ZDOUBLE double precision, ZBOOL boolean, ZDECIMAL numeric, ZTEXT text, ZDATA bytea, ZUUID uuid)")
        let date = Date(timeIntervalSinceReferenceDate: 786_000_123.456_789_012)
        let uuid = UUID()
        let rows: [[ManagedValue]] = [
            [.integer(1), .integer(.max), .double(-0.1), .bool(true), .decimal(Decimal(string: "12345678901234567890.123456789")!), .string("Zoë 👩‍💻"), .data(Data([0, 1, 255])), .uuid(uuid)],
            [.integer(2), .integer(.min), .double(.infinity), .bool(false), .decimal(-1), .string(""), .data(Data()), .null],
            [.integer(3), .null, .null, .null, .null, .null, .null, .null],
        ]
        for row in rows {
            // The codec itself (statements the store builds bind truth values as 0 and 1).
            _ = try session.run("INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", row)
        }
        let read = try session.execute(text: "SELECT * FROM \(table) ORDER BY Z_PK").rows
        #expect(read == rows)
        // Dates go as Core Data keeps them (seconds since 2001, a double) and come back equal.
        try session.execute("UPDATE \(sql: table) SET ZDOUBLE = \(bind: .date(date)) WHERE Z_PK = 3" as SQLFragment)
        #expect(try session.execute(text: "SELECT ZDOUBLE FROM \(table) WHERE Z_PK = 3").rows == [[.double(date.timeIntervalSinceReferenceDate)]])
        let link = ManagedValue.url(URL(string: "https://example.com/a?b=c")!)
        #expect(try session.execute("SELECT ZTEXT FROM \(sql: table) WHERE ZTEXT = \(bind: link)" as SQLFragment).rows.isEmpty)
    }

    @Test func valuesShapedLikeSQLAreStoredVerbatim() throws {
        let (session, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: session) }
        let table = PostgreSQLSQL.qualified(schema, "ZNOTE")
        try session.execute(text: "CREATE TABLE \(table) (ZTITLE text)")
        let hostile = "x'); DROP TABLE \(table); --"
        let outcome = try session.execute("INSERT INTO \(sql: table) VALUES (\(bind: .string(hostile)))" as SQLFragment)
        #expect(outcome.changed == 1)
        #expect(try session.execute(text: "SELECT ZTITLE FROM \(table)").rows == [[.string(hostile)]])
    }

    @Test func aTransactionThatThrowsLeavesNothingAndTheServersErrorIsACoreDataError() throws {
        let (session, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: session) }
        let table = PostgreSQLSQL.qualified(schema, "ZITEM")
        try session.execute(text: "CREATE TABLE \(table) (Z_PK bigint PRIMARY KEY)")
        try session.transaction { try session.execute(text: "INSERT INTO \(table) VALUES (1)") }
        var failure: CoreDataError?
        do {
            try session.transaction {
                try session.execute(text: "INSERT INTO \(table) VALUES (2)")
                try session.execute(text: "INSERT INTO \(table) VALUES (1)")     // duplicate key
            }
        } catch {
            failure = error as? CoreDataError
        }
        #expect(failure?.code == .persistentStoreOperation)
        #expect(failure?.message.contains("SQLSTATE 23505") == true, "\(failure?.message ?? "no error")")
        #expect(try session.execute(text: "SELECT Z_PK FROM \(table) ORDER BY Z_PK").rows == [[.integer(1)]])
        // The session is usable after the failed transaction.
        #expect(try session.execute(text: "SELECT count(*) FROM \(table)").rows == [[.integer(1)]])
    }

    @Test func notificationsReachListenersOfOtherSessionsOnlyWhenCommitted() throws {
        let (listening, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: listening) }
        let sending = try PostgreSQLSession.connect(try TestServer.url())
        defer { sending.close() }
        let channel = schema + "_changes"
        let received = Received()
        let listener = try listening.listen(channel) { received.append($0) }
        try sending.notify(channel, payload: "first")
        _ = try? sending.transaction {
            try sending.notify(channel, payload: "rolled back")
            throw CancellationError()
        }
        try sending.transaction { try sending.notify(channel, payload: "second") }
        #expect(received.waitFor(count: 2) == ["first", "second"])
        listener.stop()
        try sending.notify(channel, payload: "after stop")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(received.values == ["first", "second"])
    }

    @Test func aCallFromAnEventLoopThreadIsRefusedInsteadOfBlockingIt() throws {
        let (session, schema) = try TestServer.session()
        defer { TestServer.drop(schema, with: session) }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let outcome = try loop.submit { () -> String in
            do {
                _ = try session.execute("SELECT 1")
                return "answered"
            } catch let error as CoreDataError {
                return error.message
            } catch {
                return "\(error)"
            }
        }.wait()
        #expect(outcome.contains("event loop thread"), "\(outcome)")
        #expect(try session.execute("SELECT 1").rows == [[.integer(1)]])
    }

    @Test func aServerThatIsNotThereIsAnOpenError() throws {
        var url = try TestServer.url()
        url.port = try Self.closedPort()
        url.connectTimeout = 5
        var failure: CoreDataError?
        do { _ = try PostgreSQLSession.connect(url) } catch { failure = error as? CoreDataError }
        #expect(failure?.code == .persistentStoreOpen)
        #expect(failure?.message.contains("127.0.0.1:\(url.port)") == true || failure?.message.contains(url.host) == true)
    }

    /// A loopback port nothing listens on (bound, then released).
    private static func closedPort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = channel.localAddress?.port ?? 1
        try channel.close().wait()
        return port
    }
}

/// Notification payloads, appended on an event loop and read by the test.
final class Received: Sendable {
    private let state = Mutex<[String]>([])

    func append(_ value: String) { state.withLock { $0.append(value) } }
    var values: [String] { state.withLock { $0 } }

    /// The values once there are `count` of them (or what arrived within 20 s).
    func waitFor(count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(20)
        while values.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return values
    }
}

/// TLS against a server with a self-signed certificate (`.ci/postgres-server`'s, as Debian's
/// packages serve one).
@Suite(.enabled(if: TestServer.isConfigured && TestServer.tlsAuthority != nil, "OCD_POSTGRES_TLS_CA is not set: .ci/run exports the certificate of the server it starts"), .dedicatedThread)
struct PostgreSQLTLSTests {
    private func isEncrypted(_ session: PostgreSQLSession) throws -> Bool {
        try session.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows == [[.bool(true)]]
    }

    /// A store URL naming a server on this machine, as a newcomer writes it, connects — encrypted,
    /// its certificate not checked (libpq's `prefer`); checking it refused every connection.
    @Test func theDefaultOnThisMachineConnectsEncryptedToASelfSignedServer() throws {
        for host in ["127.0.0.1", "localhost"] {
            let session = try PostgreSQLSession.connect(try TestServer.url(adding: [], host: host))
            defer { session.close() }
            #expect(try isEncrypted(session), "\(host)")
        }
    }

    /// `require` verifies the certificate: against the authority `tls_ca` names it connects (by
    /// name and by address); against the system's authorities, which never signed it, it refuses.
    @Test func requireVerifiesTheCertificate() throws {
        let authority = try #require(TestServer.tlsAuthority)
        for host in ["127.0.0.1", "localhost"] {
            let session = try PostgreSQLSession.connect(try TestServer.url(adding: [URLQueryItem(name: "tls", value: "require"), URLQueryItem(name: "tls_ca", value: authority)], host: host))
            defer { session.close() }
            #expect(try isEncrypted(session), "\(host)")
        }
        var refusal: CoreDataError?
        do {
            _ = try PostgreSQLSession.connect(try TestServer.url(adding: [URLQueryItem(name: "tls", value: "require")]))
        } catch {
            refusal = error as? CoreDataError
        }
        #expect(refusal?.code == .persistentStoreOpen)
        #expect(refusal?.message.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(String(describing: refusal))")
    }
}
