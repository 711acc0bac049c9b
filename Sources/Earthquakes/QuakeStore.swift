import Foundation
import OpenCoreData
import Synchronization

/// Apple's Earthquakes pattern: a background context batch-imports a feed without making
/// objects; the view context stays current by merging the store's persistent history, from the
/// last token it processed.
public final class QuakeStore: Sendable {
    /// The container: one SQLite store with history tracking and remote-change notifications.
    public let container: PersistentContainer
    /// The history position the view context has merged up to. Guarded by its mutex.
    private let lastToken: Mutex<PersistentHistoryToken?>

    /// Where the store lives unless told otherwise: the container's default location
    /// (`<data folder>/Earthquakes/Earthquakes.sqlite`).
    public static var defaultURL: URL {
        PersistentContainer.defaultDirectoryURL().appendingPathComponent("Earthquakes").appendingPathComponent("Earthquakes.sqlite")
    }

    /// Opens (creating) the store at `url`, or at ``defaultURL``.
    public init(url: URL? = nil) throws {
        container = PersistentContainer(name: "Earthquakes", managedObjectModel: ManagedObjectModel(Quake.self))
        let description = PersistentStoreDescription(url: url ?? Self.defaultURL)
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.setOption(true, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        lastToken = Mutex(container.persistentStoreCoordinator.currentPersistentHistoryToken())
    }

    /// The store file.
    public var url: URL? { container.persistentStoreCoordinator.persistentStores.first?.url }

    /// Imports a feed in one batch insert on a background context (quakes already in the store
    /// are updated: `code` is unique), then brings the view context up to date through history.
    /// `progress` is called with (done, total) as rows are produced. Returns the rows written.
    @discardableResult
    public func importFeed(_ feed: QuakeFeed, progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Int {
        let context = container.newBackgroundContext()
        context.transactionAuthor = "importer"
        let records = feed.records
        let entity = try container.managedObjectModel.entitiesByName["Quake"] ?? { throw CoreDataError(.coreData, "The model has no Quake entity.") }()
        let written = try await context.perform { () throws -> Int in
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
                if index % 100 == 0 || index == records.count { progress(index, records.count) }
                return false
            })
            request.resultType = .count
            return try context.execute(request).result as? Int ?? 0
        }
        try await mergeHistoryIntoViewContext()
        return written
    }

    /// Merges the transactions recorded since the last merge into the view context, in one
    /// pass, and moves the token; returns how many transactions were merged.
    @discardableResult
    public func mergeHistoryIntoViewContext() async throws -> Int {
        let viewContext = container.viewContext
        let token = lastToken.withLock { $0 }
        let (count, last) = try await viewContext.perform { () throws -> (Int, PersistentHistoryToken?) in
            let transactions = try viewContext.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
            viewContext.mergeChanges(fromHistory: transactions)
            return (transactions.count, transactions.last?.token)
        }
        if let last { lastToken.withLock { $0 = max($0 ?? last, last) } }
        return count
    }

    /// One quake, as the list shows it.
    public struct Summary: Sendable, Equatable {
        /// The USGS event id.
        public var code: String
        /// The magnitude, when known.
        public var magnitude: Double?
        /// Where, in words.
        public var place: String
        /// When it happened.
        public var time: Date

        /// A summary of a quake (the SwiftData sample makes them too).
        public init(code: String, magnitude: Double?, place: String, time: Date) {
            self.code = code
            self.magnitude = magnitude
            self.place = place
            self.time = time
        }
    }

    /// The newest quakes, read on the view context.
    public func newest(_ limit: Int) async throws -> [Summary] {
        let viewContext = container.viewContext
        return try await viewContext.perform { () throws in
            let request = Quake.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "time", ascending: false)]
            request.fetchLimit = limit
            return try viewContext.fetch(request).map { Summary(code: $0.code, magnitude: $0.magnitude, place: $0.place, time: $0.time) }
        }
    }

    /// How many quakes the store holds.
    public func count() async throws -> Int {
        let viewContext = container.viewContext
        return try await viewContext.perform { () throws in try viewContext.count(for: Quake.fetchRequest()) }
    }
}
