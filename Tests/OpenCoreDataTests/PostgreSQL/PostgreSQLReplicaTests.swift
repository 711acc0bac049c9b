import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A store whose URL names hot standbys (`replicas=`): fetches read there once the standby has
/// replayed the coordinator's own saves, and writes follow the primary to a promoted standby.
@Suite(.dedicatedThread) struct PostgreSQLReplicaTests {
    private static let model = ManagedObjectModel(Entry.self)
    /// The test server's hot standby (`.ci/run` starts one with `.ci/postgres-server standby`).
    static let standby = ProcessInfo.processInfo.environment["OCD_POSTGRES_STANDBY"].flatMap { $0.isEmpty ? nil : $0 }

    private func container(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Replica", managedObjectModel: Self.model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: .postgreSQL)]
        try container.loadPersistentStores()
        return container
    }

    private func url(_ base: URL, _ parameters: [URLQueryItem]) throws -> URL {
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + parameters
        return try #require(components.url)
    }

    private func codes(_ container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait { () throws in
            try context.fetch(FetchRequest<Entry>(entityName: "Entry")).map(\.code).sorted()
        }
    }

    private func save(_ code: String, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            Entry(context: context).code = code
            try context.save()
        }
    }

    /// Runs `sql` on the server at `hostAndPort` as the test server's user.
    private func run(_ sql: String, on hostAndPort: String) throws {
        let text = try #require(TestPostgreSQL.urlText)
        var components = try #require(URLComponents(string: text))
        let parts = hostAndPort.split(separator: ":")
        components.host = String(parts[0])
        components.port = Int(parts[1])
        let session = try PostgreSQLSession.connect(PostgreSQLStoreURL(try #require(components.url)))
        defer { session.close() }
        _ = try session.execute(text: sql)
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured && Self.standby != nil, "OCD_POSTGRES_URL or OCD_POSTGRES_STANDBY is not set"))
    func fetchesReadTheStandbyOnceItHasReplayedTheCoordinatorsOwnSaves() throws {
        let directory = TemporaryDirectory()
        let standby = try #require(Self.standby)
        let base = try TestPostgreSQL.storeURL(schema: directory.schemaName)
        defer { TestPostgreSQL.drop([directory.schemaName]) }
        let primaryOnly = try container(base)
        let withReplica = try container(url(base, [URLQueryItem(name: "replicas", value: standby)]))
        try save("first", in: withReplica)
        // Its own save is read back, wherever the read goes.
        #expect(try codes(withReplica) == ["first"])

        try run("SELECT count(*) FROM (SELECT pg_wal_replay_pause()) AS paused", on: standby)
        defer { try? run("SELECT count(*) FROM (SELECT pg_wal_replay_resume()) AS resumed", on: standby) }
        // Another coordinator's save, which the paused standby does not replay: a fetch of the
        // coordinator with the replica does not see it — the read went to the standby.
        try save("other", in: primaryOnly)
        #expect(try codes(primaryOnly) == ["first", "other"])
        #expect(try codes(withReplica) == ["first"])
        // The coordinator's own save is never read past: the standby cannot replay it, so the
        // primary answers (and sees both).
        try save("second", in: withReplica)
        #expect(try codes(withReplica) == ["first", "other", "second"])

        try run("SELECT count(*) FROM (SELECT pg_wal_replay_resume()) AS resumed", on: standby)
        try save("third", in: withReplica)
        #expect(try codes(withReplica) == ["first", "other", "second", "third"])
    }

    /// A failover: the primary dies, its synchronous standby is promoted, and the same coordinator
    /// saves again — to the promoted standby — without losing an acknowledged save or reusing a key.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func savesFollowAPromotedStandbyAndLoseNothingAcknowledged() throws {
        // A primary and a standby of the test's own: the shared test server must stay.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".ci/postgres-server")
        try #require(FileManager.default.fileExists(atPath: script.path), "no .ci/postgres-server beside the tests (\(script.path))")
        let cluster = PostgreSQLServerPair(script: PostgreSQLServerScript(path: script.path))
        defer { cluster.stop() }
        let primary = try cluster.start()
        let standby = try cluster.startStandby()
        // Synchronous replication: a COMMIT is acknowledged once the standby has it.
        try cluster.makeSynchronous()

        var components = try #require(URLComponents(url: primary, resolvingAgainstBaseURL: false))
        components.queryItems = [URLQueryItem(name: "replicas", value: standby), URLQueryItem(name: "statement_timeout", value: "10")]
        let stack = try container(try #require(components.url))
        let context = stack.newBackgroundContext()
        let keysBefore = try context.performAndWait { () throws -> [Int64] in
            for code in ["a", "b", "c"] { Entry(context: context).code = code }
            try context.save()
            return context.registeredObjects.compactMap(\.objectID.primaryKey)
        }

        try cluster.crashPrimary()
        try cluster.promoteStandby()
        // The same context saves again, on the promoted standby (the first attempt may meet the
        // dead primary's connection: a save that fails is whole or absent, and is tried again).
        let keyAfter = try context.performAndWait { () throws -> Int64 in
            let entry = Entry(context: context)
            entry.code = "after"
            var attempts = 0
            while true {
                do {
                    try context.save()
                    break
                } catch where attempts < 5 {
                    attempts += 1
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
            return try #require(entry.objectID.primaryKey)
        }
        #expect(keyAfter > (keysBefore.max() ?? 0))
        #expect(try codes(stack) == ["a", "after", "b", "c"])
    }
}
