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
        let entity = try container.managedObjectModel.entitiesByName["Quake"] ?? { throw CoreDataError(.coreData, "The model has no Quake entity.") }()
        return try await context.perform { () throws -> Int in
            var index = 0
            let request = BatchInsertRequest(entity: entity, managedObjectHandler: { object in
                guard index < records.count, let quake = object as? Quake else { return true }
                let record = records[index]
                quake.code = record.code
                quake.magnitude = record.magnitude
                quake.place = record.place
                quake.time = record.time
                quake.updated = record.updated
                quake.latitude = record.latitude
                quake.longitude = record.longitude
                quake.depth = record.depth
                index += 1
                return false
            })
            request.resultType = .count
            return try context.execute(request).result as? Int ?? 0
        }
    }
}
