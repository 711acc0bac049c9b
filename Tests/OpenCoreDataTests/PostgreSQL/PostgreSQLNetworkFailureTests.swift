import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// What production networks do to a PostgreSQL store's connections, made by a loopback proxy
/// between the store and the test server: a partition (bytes held, nothing closed) and a restart
/// (every connection cut at once).
@Suite(.dedicatedThread) struct PostgreSQLNetworkFailureTests {
    private static let model = ManagedObjectModel(Entry.self)

    /// The test server's URL for a fresh schema, reached through `proxy`, with `parameters` added.
    private func url(through proxy: TCPProxy, schema: String, _ parameters: [URLQueryItem] = []) throws -> URL {
        var components = try #require(URLComponents(url: TestPostgreSQL.storeURL(schema: schema), resolvingAgainstBaseURL: false))
        components.host = "127.0.0.1"
        components.port = proxy.port
        components.queryItems = (components.queryItems ?? []) + parameters
        return try #require(components.url)
    }

    private func proxy() throws -> TCPProxy {
        let server = try #require(TestPostgreSQL.urlText.flatMap(URL.init(string:)))
        return try TCPProxy(upstreamPort: server.port ?? PostgreSQLStoreURL.defaultPort)
    }

    private func container(_ url: URL, options: [String: any Sendable] = [:]) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Network", managedObjectModel: Self.model)
        let description = PersistentStoreDescription(url: url, type: .postgreSQL)
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// The codes saved in the schema, read directly (not through the proxy).
    private func savedCodes(schema: String) throws -> [String] {
        let reader = try container(TestPostgreSQL.storeURL(schema: schema))
        let context = reader.newBackgroundContext()
        return try context.performAndWait { () throws in
            try context.fetch(FetchRequest<Entry>(entityName: "Entry")).map(\.code).sorted()
        }
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aSaveCutOffByAPartitionThrowsAndTheSameContextSavesOnceItHeals() throws {
        let directory = TemporaryDirectory()
        let proxy = try proxy()
        defer { proxy.stop() }
        // A short limit (the call then ends after 5 + 5 s), yet long enough for every statement
        // of a loaded machine before the partition.
        let stack = try container(url(through: proxy, schema: directory.schemaName, [URLQueryItem(name: "statement_timeout", value: "5")]))
        let context = stack.newBackgroundContext()
        try context.performAndWait { () throws in
            Entry(context: context).code = "before"
            try context.save()
        }

        proxy.partition()
        let failure = context.performAndWait { () -> CoreDataError? in
            Entry(context: context).code = "during"
            do {
                try context.save()
                return nil
            } catch {
                return error as? CoreDataError
            }
        }
        #expect(failure?.code == .persistentStoreTimeout, "\(String(describing: failure))")
        #expect(failure?.message.contains("did not answer") == true)

        proxy.heal()
        // The same context, nothing reopened: its unsaved object is saved, once.
        try context.performAndWait { () throws in try context.save() }
        #expect(try savedCodes(schema: directory.schemaName) == ["before", "during"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aConnectionAcceptedAndThenNeverAnsweredEndsAfterConnectTimeout() throws {
        let directory = TemporaryDirectory()
        let proxy = try proxy()
        defer { proxy.stop() }
        // The proxy accepts the TCP connection and then holds every byte: the startup is never
        // answered. (postgres-nio's connect timeout covers the startup too; this keeps it so.)
        proxy.partition()
        let storeURL = try PostgreSQLStoreURL(url(through: proxy, schema: directory.schemaName, [URLQueryItem(name: "connect_timeout", value: "1")]))
        let started = Date()
        let failure = #expect(throws: CoreDataError.self) { try PostgreSQLSession.connect(storeURL) }
        #expect(failure?.code == .persistentStoreOpen, "\(String(describing: failure))")
        #expect(failure?.message.contains("timeout") == true, "\(String(describing: failure))")
        // A liveness bound, not a speed goal: without the limit the call never returns.
        #expect(Date().timeIntervalSince(started) < 60)
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func everyConnectionCutAtOnceCostsNoSave() async throws {
        let directory = TemporaryDirectory()
        let proxy = try proxy()
        defer { proxy.stop() }
        let storeURL = try url(through: proxy, schema: directory.schemaName)
        let stack = try container(storeURL)
        let context = stack.newBackgroundContext()
        try await context.perform { () throws in
            Entry(context: context).code = "before"
            try context.save()
        }

        // The server's ends closed without the client knowing: a pooled connection found dead by
        // its first statement costs nothing (the operation starts again on a new one).
        proxy.endServersUnnoticed()
        try await context.perform { () throws in
            Entry(context: context).code = "after"
            try context.save()
        }
        // And once the cut has surely reached the client (a session of its own shows it).
        let probe = try PostgreSQLSession.connect(PostgreSQLStoreURL(storeURL))
        proxy.cutAll()
        #expect(await eventually { probe.isClosed })
        try await context.perform { () throws in
            Entry(context: context).code = "later"
            try context.save()
        }
        #expect(try savedCodes(schema: directory.schemaName) == ["after", "before", "later"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func remoteChangesAreAnnouncedAgainAfterTheConnectionsWereCut() async throws {
        let directory = TemporaryDirectory()
        let proxy = try proxy()
        defer { proxy.stop() }
        let watching = try container(url(through: proxy, schema: directory.schemaName),
                                     options: [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        let recorder = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: watching.persistentStoreCoordinator, queue: nil) {
            recorder.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        proxy.cutAll()
        // Another coordinator, straight to the server, saves twice: once at once (while the
        // watcher may still be reconnecting: the announcement that follows reconnecting covers
        // it) and once after.
        let writer = try container(TestPostgreSQL.storeURL(schema: directory.schemaName), options: [NSPersistentHistoryTrackingKey: true])
        let context = writer.newBackgroundContext()
        for code in ["first", "second"] {
            try await context.perform { () throws in
                Entry(context: context).code = code
                try context.save()
            }
            let number = try #require(writer.persistentStoreCoordinator.currentPersistentHistoryToken()?.transactionNumber)
            let announced = await eventually {
                recorder.values.contains { (($0.userInfo?[NSPersistentHistoryTokenKey] as? PersistentHistoryToken)?.transactionNumber ?? 0) >= number }
            }
            #expect(announced, "the save numbered \(number) in history was not announced")
        }
    }
}
