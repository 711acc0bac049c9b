import Foundation
import OpenCoreData
import Testing
import TestSupport

/// `.NSPersistentStoreRemoteChange` after every change to the store (an SQLite file, a PostgreSQL
/// schema): by this coordinator, by another coordinator, and by another process.
// Serialized: the child finds its store through environment variables set before it starts.
@Suite(.serialized, .dedicatedThread) struct RemoteChangeTests {
    private static let options: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true]

    private func open(_ kind: StoreKind, _ directory: TemporaryDirectory) throws -> TestStack {
        try TestStack(kind, model: ManagedObjectModel(Entry.self), directory: directory, options: Self.options)
    }

    /// Waits until `recorder` holds a notification whose token reaches `number`.
    private func waitForToken(_ recorder: NotificationRecorder, atLeast number: Int64) async throws -> Notification? {
        func match() -> Notification? {
            recorder.values.first { (($0.userInfo?[NSPersistentHistoryTokenKey] as? PersistentHistoryToken)?.transactionNumber ?? 0) >= number }
        }
        _ = await eventually { match() != nil }
        return match()
    }

    private func observe(_ stack: TestStack) -> (NotificationRecorder, any NSObjectProtocol) {
        let recorder = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: stack.container.persistentStoreCoordinator, queue: nil) {
            recorder.append($0)
        }
        return (recorder, observer)
    }

    @Test(arguments: MultiProcessTests.sharedKinds)
    func ownSavesAndAnotherCoordinatorsSavesAreAnnounced(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let first = try open(kind, directory)
        let (recorder, observer) = observe(first)
        defer { NotificationCenter.default.removeObserver(observer) }
        let context = first.container.newBackgroundContext()
        try await context.perform { () throws in
            Entry(context: context).code = "mine"
            try context.save()
        }
        let own = try #require(try await waitForToken(recorder, atLeast: 1))
        #expect(own.userInfo?[NSStoreUUIDKey] as? String == first.container.persistentStoreCoordinator.persistentStores.first?.identifier)
        #expect(own.userInfo?[NSPersistentStoreURLKey] as? URL == first.container.persistentStoreCoordinator.persistentStores.first?.url)

        // A second coordinator on the same file.
        let second = try open(kind, directory)
        let other = second.container.newBackgroundContext()
        try await other.perform { () throws in
            Entry(context: other).code = "theirs"
            try other.save()
        }
        let remote = try #require(try await waitForToken(recorder, atLeast: 2))
        let token = try #require(remote.userInfo?[NSPersistentHistoryTokenKey] as? PersistentHistoryToken)
        // The announced token finds the other coordinator's transaction in history.
        let mine = first.container.newBackgroundContext()
        let transactions = try await mine.perform { () throws in
            try mine.execute(PersistentHistoryChangeRequest.fetchHistory(after: PersistentHistoryToken(storeIdentifier: token.storeIdentifier, transactionNumber: 1))).transactions
        }
        #expect(transactions.count == 1)
        _ = second
    }

    @Test(arguments: MultiProcessTests.sharedKinds)
    func anotherProcessWritingTheStoreIsAnnounced(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let stack = try open(kind, directory)
        let (recorder, observer) = observe(stack)
        defer { NotificationCenter.default.removeObserver(observer) }
        setenv("OCD_REMOTE_CHANGE_STORE", directory.url.path, 1)
        setenv("OCD_REMOTE_CHANGE_KIND", kind.rawValue, 1)
        await #expect(processExitsWith: .success) {
            // In a child process: open the same file and save.
            guard let path = ProcessInfo.processInfo.environment["OCD_REMOTE_CHANGE_STORE"],
                  let kind = ProcessInfo.processInfo.environment["OCD_REMOTE_CHANGE_KIND"].flatMap(StoreKind.init(rawValue:)) else { exit(3) }
            let child = try TestStack(kind, model: ManagedObjectModel(Entry.self), directory: TemporaryDirectory(existing: URL(fileURLWithPath: path)),
                                      options: [NSPersistentHistoryTrackingKey: true])
            let context = child.container.newBackgroundContext()
            try context.performAndWait { () throws in
                Entry(context: context).code = "from another process"
                try context.save()
            }
            exit(0)
        }
        let notification = try #require(try await waitForToken(recorder, atLeast: 1))
        #expect(notification.object as AnyObject === stack.container.persistentStoreCoordinator)
    }
}
