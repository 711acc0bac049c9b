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
        let role = try TestRole("limit", attributes: "CONNECTION LIMIT 2", for: directory)
        defer { role.drop() }
        let url = try role.url(directory.postgreSQLSchema(), [URLQueryItem(name: "pool", value: "6")])
        let container = PersistentContainer(name: "Limit", managedObjectModel: ManagedObjectModel(Entry.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: .postgreSQL)]
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
