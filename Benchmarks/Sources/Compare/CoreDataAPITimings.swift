import Foundation
import OpenCoreData

/// The Core Data API's side of the SwiftData scenario: the same notes inserted, fetched and
/// updated through `OurOperations` on a store of their own.
enum CoreDataAPITimings {
    static func run(_ rows: [RawNote]) throws -> (insert: Double, fetch: Double, update: Double) {
        let container = PersistentContainer(name: "Bench", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: scratchFile("coredata.sqlite"))]
        try container.loadPersistentStores()
        let insert = try OurOperations.insertAndSave(rows, in: container.newBackgroundContext())
        let fetch = try OurOperations.fetchAndReadAll(in: container.newBackgroundContext())
        let update = try OurOperations.updateAllAndSave(in: container.newBackgroundContext())
        return (insert, fetch, update)
    }
}
