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

    public func mergeHistoryIntoViewContext() async throws {
        let viewContext = container.viewContext
        let token = lastToken.withLock { $0 }
        let last = try await viewContext.perform { () throws -> PersistentHistoryToken? in
            let transactions = try viewContext.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
            viewContext.mergeChanges(fromHistory: transactions)
            return transactions.last?.token
        }
        if let last { lastToken.withLock { $0 = max($0 ?? last, last) } }
    }

    public struct Summary: Sendable, Equatable {
        public var code: String
        public var magnitude: Double?
        public var place: String
        public var time: Date
    }

    public func newest(_ limit: Int) async throws -> [Summary] {
        let viewContext = container.viewContext
        return try await viewContext.perform { () throws in
            let request = Quake.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "time", ascending: false)]
            request.fetchLimit = limit
            return try viewContext.fetch(request).map { Summary(code: $0.code, magnitude: $0.magnitude, place: $0.place, time: $0.time) }
        }
    }
}
