import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// The PostgreSQL server the parity tests use: `OCD_POSTGRES_URL`. Each test's stores live in
/// schemas of its own, dropped with its temporary folder.
enum TestPostgreSQL {
    static let urlText = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static var isConfigured: Bool { urlText != nil }

    /// The server's URL with `schema` (a fresh one unless given).
    static func storeURL(schema: String) throws -> URL {
        guard let text = urlText, var components = URLComponents(string: text) else {
            throw CoreDataError(.persistentStoreOpen, "OCD_POSTGRES_URL is not set.")
        }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        guard let url = components.url else { throw CoreDataError(.persistentStoreOpen, "OCD_POSTGRES_URL is not a URL.") }
        return url
    }

    /// Drops schemas (after the stores on them were closed).
    static func drop(_ schemas: [String]) {
        guard !schemas.isEmpty, let text = urlText, let url = URL(string: text), let storeURL = try? PostgreSQLStoreURL(url),
              let session = try? PostgreSQLSession.connect(storeURL) else { return }
        for schema in schemas { _ = try? session.execute(text: "DROP SCHEMA IF EXISTS " + PostgreSQLSQL.quoted(schema) + " CASCADE") }
        session.close()
    }
}

/// A login role made for one test on the test server (whose user must be allowed to create
/// roles: `.ci/postgres-server`'s is a superuser), allowed to create schemas in the test database;
/// dropped with everything it owns by `drop()`.
struct TestRole {
    let name: String
    private let admin: PostgreSQLSession

    /// Creates the role `ocd_PURPOSE_…` with `attributes` (`CONNECTION LIMIT 2`, …) for the test
    /// whose folder is `directory`.
    init(_ purpose: String, attributes: String = "", for directory: TemporaryDirectory) throws {
        admin = try PostgreSQLSession.connect(PostgreSQLStoreURL(TestPostgreSQL.storeURL(schema: "public")))
        name = "ocd_\(purpose)_" + directory.schemaName.suffix(12)
        try admin.execute(text: "CREATE ROLE \(name) LOGIN \(attributes)")
        let database = try #require(try admin.execute("SELECT current_database()").rows.first?.first.flatMap { value -> String? in
            if case .string(let name) = value { name } else { nil }
        })
        try admin.execute(text: "GRANT CREATE ON DATABASE \(PostgreSQLSQL.quoted(database)) TO \(name)")
    }

    /// `url` (a store URL on the test server) as this role, without a password, with `parameters` added.
    func url(_ url: URL, _ parameters: [URLQueryItem] = []) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.user = name
        components.password = nil
        components.queryItems = (components.queryItems ?? []) + parameters
        return try #require(components.url)
    }

    /// Runs a statement as the test server's own user (to configure the role).
    func configure(_ sql: String) throws {
        try admin.execute(text: sql)
    }

    func drop() {
        _ = try? admin.execute(text: "DROP OWNED BY \(name)")
        _ = try? admin.execute(text: "DROP ROLE \(name)")
        admin.close()
    }
}

extension TemporaryDirectory {
    /// A store URL on the test server, in a schema dropped when this folder is removed. Asked
    /// twice, the same schema (a second coordinator opens the same store, as with a file).
    func postgreSQLSchema() throws -> URL {
        try TestPostgreSQL.storeURL(schema: schemaName)
    }
}

@Suite(.dedicatedThread) struct PostgreSQLAvailabilityTests {
    /// CI must run the parity tests on PostgreSQL too: a missing server fails the run instead
    /// of leaving the cases out quietly.
    @Test func parityTestsRunOnPostgreSQLUnderContinuousIntegration() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(TestPostgreSQL.isConfigured, "CI=true but OCD_POSTGRES_URL is not set: the parity tests did not run on PostgreSQL")
        } else if !TestPostgreSQL.isConfigured {
            print("⚠️  Parity tests run on SQLite and in memory only: set OCD_POSTGRES_URL (see `.ci/postgres-server`) to run them on PostgreSQL too")
        }
    }
}
