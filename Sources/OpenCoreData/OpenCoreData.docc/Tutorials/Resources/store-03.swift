import Foundation
import OpenCoreData
import Synchronization

public final class QuakeStore: Sendable {
    public let container: PersistentContainer
    private let lastToken: Mutex<PersistentHistoryToken?>

    public init(url: URL? = nil) throws {
        container = PersistentContainer(name: "Earthquakes", managedObjectModel: ManagedObjectModel(Quake.self))
        let description = url.map { PersistentStoreDescription(url: $0) } ?? container.persistentStoreDescriptions[0]
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.setOption(true, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        lastToken = Mutex(container.persistentStoreCoordinator.currentPersistentHistoryToken())
    }

    public func importFeed(_ feed: QuakeFeed) async throws -> Int {
        let context = container.newBackgroundContext()
        context.transactionAuthor = "importer"
        let records = feed.records
        return 0
    }
}
