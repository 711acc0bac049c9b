import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// The server decides how many connections a client may have (`max_connections`, a role's or a
/// database's connection limit, shared with every other process): a store whose pool is larger
/// than the room left waits for its own sessions instead of failing a save with 53300.
@Suite(.dedicatedThread) struct PostgreSQLConnectionLimitTests {
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aPoolLargerThanTheServerAllowsWaitsForItsOwnSessions() async throws {
        let directory = TemporaryDirectory()
        let admin = try PostgreSQLSession.connect(PostgreSQLStoreURL(TestPostgreSQL.storeURL(schema: "public")))
        defer { admin.close() }
        let role = "ocd_limit_" + directory.schemaName.suffix(12)
        // Needs a test server user that may create roles (`.ci/postgres-server`'s is a superuser).
        try admin.execute("CREATE ROLE \(role) LOGIN CONNECTION LIMIT 2")
        defer {
            _ = try? admin.execute("DROP OWNED BY \(role)")
            _ = try? admin.execute("DROP ROLE \(role)")
        }
        let database = try #require(try admin.execute("SELECT current_database()").rows.first?.first.flatMap { value -> String? in
            if case .string(let name) = value { name } else { nil }
        })
        try admin.execute("GRANT CREATE ON DATABASE \(PostgreSQLSQL.quoted(database)) TO \(role)")

        var components = try #require(URLComponents(url: directory.postgreSQLSchema(), resolvingAgainstBaseURL: false))
        components.user = role
        components.password = nil
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "pool", value: "6")]
        let container = PersistentContainer(name: "Limit", managedObjectModel: ManagedObjectModel(Entry.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: try #require(components.url), type: .postgreSQL)]
        try container.loadPersistentStores()
        defer { for store in container.persistentStoreCoordinator.persistentStores { try? container.persistentStoreCoordinator.remove(store) } }

        // Six writers at once, each reading and saving: more sessions wanted than the role may open.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<6 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    for round in 0..<15 {
                        try await context.perform { () throws in
                            Entry(context: context).code = "\(writer)-\(round)"
                            try context.save()
                            _ = try context.count(for: FetchRequest<Entry>(entityName: "Entry"))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let context = container.newBackgroundContext()
        let saved = try await context.perform { try context.count(for: FetchRequest<Entry>(entityName: "Entry")) }
        #expect(saved == 90)
    }
}
