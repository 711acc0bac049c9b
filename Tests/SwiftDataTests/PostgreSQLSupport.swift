#if os(Linux)
import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The test server (`OCD_POSTGRES_URL`, started by `.ci/run`; OpenCoreDataTests'
/// `PostgreSQLAvailabilityTests` fails CI without it). Each test's store is a schema of its own.
enum SwiftDataTestServer {
    static let urlText = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static var isConfigured: Bool { urlText != nil }

    /// A store URL on the server in a new schema (the PostgreSQL store type registered).
    static func storeURL() throws -> (url: URL, schema: String) {
        _ = PostgreSQLStoreType
        let schema = "swiftdata_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        guard let text = urlText, var components = URLComponents(string: text) else {
            throw CoreDataError(.persistentStoreOpen, "OCD_POSTGRES_URL is not set.")
        }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        guard let url = components.url else { throw CoreDataError(.persistentStoreOpen, "OCD_POSTGRES_URL is not a URL.") }
        return (url, schema)
    }

    /// Drops a test's schema (after its containers are gone).
    static func drop(_ schema: String) {
        guard let text = urlText, let url = URL(string: text), let storeURL = try? PostgreSQLStoreURL(url),
              let session = try? PostgreSQLSession.connect(storeURL) else { return }
        _ = try? session.execute(text: "DROP SCHEMA IF EXISTS " + PostgreSQLSQL.quoted(schema) + " CASCADE")
        session.close()
    }
}
#endif
