import Foundation
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// The PostgreSQL server the tests use: `OCD_POSTGRES_URL` (`.ci/run` starts one with
/// `.ci/postgres-server` and sets it). Without it, the suites that need a server are skipped —
/// reported as skipped with the reason, never as passed — and under CI the run fails
/// (`ServerAvailabilityTests`).
enum TestServer {
    static let urlText = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"]
    static var isConfigured: Bool { urlText.map { !$0.isEmpty } ?? false }
    /// The authority of the test server's certificate (`.ci/postgres-server` makes one; `.ci/run`
    /// exports its path), when the server offers TLS.
    static let tlsAuthority = ProcessInfo.processInfo.environment["OCD_POSTGRES_TLS_CA"].flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }

    /// The test server's URL with `items` added to its parameters.
    static func url(adding items: [URLQueryItem], host: String? = nil) throws -> PostgreSQLStoreURL {
        guard var components = urlText.flatMap(URLComponents.init(string:)) else { throw CancellationError() }
        components.queryItems = (components.queryItems ?? []) + items
        if let host { components.host = host }
        guard let url = components.url else { throw CancellationError() }
        return try PostgreSQLStoreURL(url)
    }
    static let skipReason: Comment = "OCD_POSTGRES_URL is not set: start a server with `.ci/postgres-server start DIR` and set OCD_POSTGRES_URL to the URL it prints"

    static func url() throws -> PostgreSQLStoreURL {
        guard let text = urlText, let url = URL(string: text) else {
            throw CancellationError()
        }
        return try PostgreSQLStoreURL(url)
    }

    /// A session in a schema of its own (created here, dropped by `drop`).
    static func session() throws -> (session: PostgreSQLSession, schema: String) {
        let session = try PostgreSQLSession.connect(try url())
        let schema = "ocd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try session.execute(text: "CREATE SCHEMA " + PostgreSQLSQL.quoted(schema))
        return (session, schema)
    }

    static func drop(_ schema: String, with session: PostgreSQLSession) {
        _ = try? session.execute(text: "DROP SCHEMA " + PostgreSQLSQL.quoted(schema) + " CASCADE")
        session.close()
    }
}

@Suite(.dedicatedThread) struct ServerAvailabilityTests {
    /// CI must test against a server: a missing one fails the run instead of skipping quietly.
    @Test func continuousIntegrationHasAServer() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(TestServer.isConfigured, "CI=true but OCD_POSTGRES_URL is not set: .ci/run starts a server; the PostgreSQL tests did not run")
            #expect(TestServer.tlsAuthority != nil, "CI=true but OCD_POSTGRES_TLS_CA names no file: .ci/run's server offers TLS with that certificate; the TLS tests did not run")
            #expect(ProcessInfo.processInfo.environment["OCD_POSTGRES_STANDBY"].map { !$0.isEmpty } ?? false,
                    "CI=true but OCD_POSTGRES_STANDBY is not set: .ci/run starts a standby; the replica tests did not run")
        } else if !TestServer.isConfigured {
            // Visible in every local run without a server.
            print("⚠️  PostgreSQL tests skipped: \(TestServer.skipReason)")
        }
    }
}
