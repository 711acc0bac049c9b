import Foundation
import OpenCoreDataCore
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

@Suite(.dedicatedThread) struct PostgreSQLStoreURLTests {
    private func parse(_ text: String) throws -> PostgreSQLStoreURL {
        try PostgreSQLStoreURL(try #require(URL(string: text)))
    }

    private func refusal(_ text: String) -> CoreDataError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error as? CoreDataError
        }
    }

    @Test func everyPartIsRead() throws {
        let url = try parse("postgresql://app:s%40cret@db.example.com:6543/notes?schema=tenant_7&pool=12&tls=require&statement_timeout=0&connect_timeout=3")
        #expect(url.host == "db.example.com" && url.port == 6543 && url.user == "app" && url.password == "s@cret" && url.database == "notes")
        #expect(url.schema == "tenant_7" && url.poolSize == 12 && url.tls == .require)
        #expect(url.statementTimeout == 0 && url.connectTimeout == 3)
        let limits = try parse("postgres://app@db.example.com/notes?lock_timeout=2&idle_in_transaction_session_timeout=0")
        #expect(limits.lockTimeout == 2 && limits.idleInTransactionTimeout == 0)
        #expect(url.description == "postgres://app@db.example.com:6543/notes?schema=tenant_7")
    }

    @Test func replicasAreHostsWithTheirPorts() throws {
        let url = try parse("postgres://app@db1/notes?replicas=db2:6543,db3,[fd00::7]:5433")
        #expect(url.replicas.map(\.description) == ["db2:6543", "db3:5432", "[fd00::7]:5433"])
        #expect(url.primary.description == "db1:5432" && url.at(url.replicas[0]).host == "db2" && url.at(url.replicas[0]).port == 6543)
        #expect(try parse("postgres://app@db1/notes").replicas.isEmpty)
    }

    @Test func defaultsAreLocalhostPublicAndAPoolOfFour() throws {
        let url = try parse("postgres://app@/notes")
        #expect(url.host == "localhost" && url.port == 5432 && url.schema == "public" && url.poolSize == 4 && url.tls == .prefer && url.password == nil)
        #expect(url.statementTimeout == 30 && url.connectTimeout == 10 && url.lockTimeout == 0 && url.idleInTransactionTimeout == 60)
        #expect(url.keepaliveIdle == 30 && url.keepaliveInterval == 10 && url.keepaliveCount == 3)
    }

    @Test func keepaliveIsReadUnderLibpqsNames() throws {
        let url = try parse("postgres://app@db.example.com/notes?keepalives_idle=5&keepalives_interval=2&keepalives_count=4")
        #expect(url.keepaliveIdle == 5 && url.keepaliveInterval == 2 && url.keepaliveCount == 4)
        #expect(try parse("postgres://app@db.example.com/notes?keepalives_idle=0").keepaliveIdle == 0)
    }

    /// On a network, `prefer` would let whoever sits on the path answer "no TLS" and read the
    /// password: TLS is required unless the server is on this machine.
    @Test func tlsIsRequiredByDefaultExceptOnThisMachine() throws {
        #expect(try parse("postgres://app@db.example.com/notes").tls == .require)
        #expect(try parse("postgres://app@10.0.0.7/notes").tls == .require)
        for host in ["localhost", "127.0.0.1", "127.8.9.1", "[::1]"] {
            #expect(try parse("postgres://app@\(host)/notes").tls == .prefer, "\(host)")
        }
        #expect(try parse("postgres://app@db.example.com/notes?tls=disable").tls == .disable)
        let privateCA = try parse("postgres://app@db.example.com/notes?tls_ca=/etc/ssl/private-ca.pem")
        #expect(privateCA.tls == .require && privateCA.tlsCAFile == "/etc/ssl/private-ca.pem")
    }

    @Test func aCertificateAuthorityFileThatCannotBeReadIsAnOpenErrorNamingIt() throws {
        var failure: CoreDataError?
        do {
            _ = try PostgreSQLSession.connect(try parse("postgres://app@db.example.com/notes?tls_ca=/nonexistent/ocd-ca.pem&connect_timeout=2"))
        } catch {
            failure = error as? CoreDataError
        }
        #expect(failure?.code == .persistentStoreOpen)
        #expect(failure?.message.contains("/nonexistent/ocd-ca.pem") == true, "\(String(describing: failure))")
    }

    @Test(arguments: [
        ("mysql://app@host/db", "its scheme is not postgres://"),
        ("postgres://host/db", "it names no user"),
        ("postgres://app@host", "it names no database"),
        ("postgres://app@host/db/extra", "its path is not one database name"),
        ("postgres://app@host/db?replicas=", "replicas names no server"),
        ("postgres://app@host/db?replicas=db2:99999", "the replica 'db2:99999' is not host or host:port"),
        ("postgres://app@host/db?schema=1abc", "the schema '1abc'"),
        ("postgres://app@host/db?schema=a%22b", "the schema 'a\"b'"),
        ("postgres://app@host/db?pool=0", "the pool size '0'"),
        ("postgres://app@host/db?pool=65", "the pool size '65'"),
        ("postgres://app@host/db?tls=maybe", "tls is 'maybe'"),
        ("postgres://app@host/db?statement_timeout=-1", "statement_timeout is '-1'"),
        ("postgres://app@host/db?statement_timeout=5s", "statement_timeout is '5s'"),
        ("postgres://app@host/db?connect_timeout=0", "connect_timeout is '0'"),
        ("postgres://app@host/db?lock_timeout=-1", "lock_timeout is '-1'"),
        ("postgres://app@host/db?idle_in_transaction_session_timeout=1m", "idle_in_transaction_session_timeout is '1m'"),
        ("postgres://app@host/db?idle_in_transaction_session_timeout=86401", "idle_in_transaction_session_timeout is '86401'"),
        ("postgres://app@host/db?keepalives_idle=-5", "keepalives_idle is '-5'"),
        ("postgres://app@host/db?keepalives_interval=0", "keepalives_interval is '0'"),
        ("postgres://app@host/db?keepalives_count=0", "keepalives_count is '0'"),
        ("postgres://app@host/db?tls_ca=", "tls_ca names no file"),
        ("postgres://app@host/db?tls=disable&tls_ca=/ca.pem", "tls_ca is given with tls=disable"),
        ("postgres://app@host/db?shema=x", "the parameter 'shema' is unknown"),
    ])
    func aURLThatCannotBeUsedIsRefusedSayingWhy(text: String, reason: String) {
        let error = refusal(text)
        #expect(error?.code == .persistentStoreInvalidType)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "no error")")
    }

    @Test func thePublishedURLHasNoPasswordAndOpensWithTheOneGivenBefore() throws {
        let given = try #require(URL(string: "postgres://publisher:pa55word@db.example.org:6000/notes?schema=s1&tls=require"))
        let published = PostgreSQLStoreURL.withoutPassword(given)
        #expect(published.absoluteString == "postgres://publisher@db.example.org:6000/notes?schema=s1&tls=require")
        let parsed = try PostgreSQLStoreURL(given)
        let again = try PostgreSQLStoreURL(published)
        #expect(again.password == "pa55word")
        #expect(again == parsed)
        // Only for the same user, server and database.
        #expect(try parse("postgres://publisher@db.example.org:6000/other").password == nil)
        #expect(try parse("postgres://someone@db.example.org:6000/notes").password == nil)
    }

    @Test func aRefusalNeverShowsThePassword() {
        let error = refusal("postgres://app:hunter2@host/db?pool=zero")
        #expect(error != nil)
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test func identifiersAreLettersDigitsAndUnderscoresUpTo63Bytes() {
        #expect(PostgreSQLStoreURL.isIdentifier("_Tenant_9"))
        #expect(PostgreSQLStoreURL.isIdentifier(String(repeating: "a", count: 63)))
        #expect(!PostgreSQLStoreURL.isIdentifier(String(repeating: "a", count: 64)))
        #expect(!PostgreSQLStoreURL.isIdentifier(""))
        #expect(!PostgreSQLStoreURL.isIdentifier("9lives"))
        #expect(!PostgreSQLStoreURL.isIdentifier("drop table"))
        #expect(!PostgreSQLStoreURL.isIdentifier("é"))
    }

    @Test func quotedIdentifiersCannotEndTheirQuotes() {
        #expect(PostgreSQLSQL.quoted("ZNOTE") == "\"ZNOTE\"")
        #expect(PostgreSQLSQL.quoted("a\"; DROP TABLE x; --") == "\"a\"\"; DROP TABLE x; --\"")
        #expect(PostgreSQLSQL.qualified("tenant", "ZNOTE") == "\"tenant\".\"ZNOTE\"")
    }
}
