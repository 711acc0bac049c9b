import Foundation

/// The whole of a fetched results controller's results as `Sendable` identifiers: section names
/// and object IDs, in order — what Core Data's diffable-data-source snapshot carries, as our own
/// type (there is no UIKit here). Compare two snapshots, or hand one to another task.
public struct FetchedResultsSnapshot: Sendable, Equatable {
    /// One section: its name and its objects' IDs.
    public struct Section: Sendable, Equatable {
        /// The section's name (`""` for results without sections).
        public var name: String
        /// The IDs of the section's objects, in the results' order.
        public var objectIDs: [ManagedObjectID]

        /// A section with a name and its objects' IDs.
        public init(name: String, objectIDs: [ManagedObjectID]) {
            self.name = name
            self.objectIDs = objectIDs
        }
    }

    /// The sections, in order.
    public var sections: [Section]
    /// Objects that changed in place since the previous snapshot (Core Data marks them as items
    /// to reload).
    public var reloadedObjectIDs: [ManagedObjectID]

    /// A snapshot of sections, with the objects to reload.
    public init(sections: [Section], reloadedObjectIDs: [ManagedObjectID] = []) {
        self.sections = sections
        self.reloadedObjectIDs = reloadedObjectIDs
    }

    /// The section names, in order (Core Data's `sectionIdentifiers`).
    public var sectionIdentifiers: [String] { sections.map(\.name) }
    /// Every object ID, in order (Core Data's `itemIdentifiers`).
    public var itemIdentifiers: [ManagedObjectID] { sections.flatMap(\.objectIDs) }
    /// How many objects there are.
    public var numberOfItems: Int { sections.reduce(0) { $0 + $1.objectIDs.count } }

    /// The object IDs of one section, by name.
    public func itemIdentifiers(inSection name: String) -> [ManagedObjectID] {
        sections.first { $0.name == name }?.objectIDs ?? []
    }
}
