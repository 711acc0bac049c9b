import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A PostgreSQL store's URL is published — `PersistentStore.url`, the remote-change
/// notification's `NSPersistentStoreURLKey`, messages — and never carries the password it was
/// opened with; the published URL still opens the store again in the same process.
@Suite(.dedicatedThread) struct PostgreSQLPublishedURLTests {
    private static let model = ManagedObjectModel(Entry.self)
    private static let secret = "not-for-logs-7f3a"

    /// The test server's URL for `schema`, with a password added (the test server trusts its
    /// loopback clients, so any password connects).
    private func urlWithPassword(schema: String) throws -> URL {
        var components = try #require(URLComponents(url: TestPostgreSQL.storeURL(schema: schema), resolvingAgainstBaseURL: false))
        components.password = Self.secret
        return try #require(components.url)
    }

    private func container(_ url: URL, options: [String: any Sendable] = [:]) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Published", managedObjectModel: Self.model)
        let description = PersistentStoreDescription(url: url, type: .postgreSQL)
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func theStoreAndItsNotificationsNeverShowThePassword() async throws {
        let directory = TemporaryDirectory()
        let given = try urlWithPassword(schema: directory.schemaName)
        let watching = try container(given, options: [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        let store = try #require(watching.persistentStoreCoordinator.persistentStores.first)
        let published = try #require(store.url)
        #expect(!published.absoluteString.contains(Self.secret), "\(published)")
        #expect(published.user == given.user && published.host == given.host && published.port == given.port && published.query == given.query)

        let recorder = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: watching.persistentStoreCoordinator, queue: nil) {
            recorder.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        // Another coordinator, opened with the published URL, saves: the watcher hears it.
        let writer = try container(published, options: [NSPersistentHistoryTrackingKey: true])
        let context = writer.newBackgroundContext()
        try await context.perform { () throws in
            Entry(context: context).code = "heard"
            try context.save()
        }
        #expect(await eventually { !recorder.values.isEmpty })
        for notification in recorder.values {
            let announced = try #require(notification.userInfo?[NSPersistentStoreURLKey] as? URL)
            #expect(!announced.absoluteString.contains(Self.secret), "\(announced)")
        }
        // The published URL is the store: adding it beside the original is a duplicate.
        #expect(throws: CoreDataError.self) {
            try watching.persistentStoreCoordinator.addPersistentStore(type: .postgreSQL, at: published)
        }
    }
}
