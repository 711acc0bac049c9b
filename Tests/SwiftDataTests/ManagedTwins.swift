#if os(Linux)
import Foundation
import OpenCoreData

// The models of Models.swift declared as Core Data code declares them (`@Managed` subclasses of
// `ManagedObject`), under the same entity names: where SwiftData and Core Data agree, both
// must describe the same store. Only this file imports OpenCoreData (its `@Attribute` and
// `@Relationship` are the `@Managed` ones).

@Managed(entityName: "Trip")
final class ManagedTrip: ManagedObject {
    @Attribute(.unique) var name: String = ""
    var destination: String = ""
    var start: Date = .distantPast
    var budget: Double = 0
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \ManagedStop.trip) var stops: Set<ManagedStop> = []
}

@Managed(entityName: "Stop")
final class ManagedStop: ManagedObject {
    var title: String = ""
    var order: Int = 0
    var trip: ManagedTrip?
}

/// The entity version hashes of the `@Managed` twins.
func managedTwinVersionHashes() -> [String: Data] {
    ManagedObjectModel(ManagedTrip.self, ManagedStop.self).entityVersionHashesByName
}

/// The entity version hashes an SQLite store file records in its metadata.
func storeVersionHashes(at url: URL) throws -> [String: Data] {
    let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
    return metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
}
#endif
