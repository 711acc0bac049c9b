/// A context's unsaved objects, held strongly until saved. Owned by the context's queue.
///
/// Inserted objects are kept in insertion order in an array (saves allocate keys in that order,
/// and an insert costs an append, not a hash); changed and deleted objects that were saved
/// before are kept by identity.
package struct PendingChanges {
    /// Inserted objects, in insertion order. May hold stale entries (deleted before saving,
    /// rolled back); `liveInserted(in:)` filters them.
    private(set) var inserted: [ManagedObject] = []
    /// Saved objects with changes (updated or deleted).
    private(set) var changed: [ObjectIdentifier: ManagedObject] = [:]
    /// `inserted` by ID, built on the first lookup and extended on later ones (a bulk insert that
    /// never looks objects up by temporary ID pays no hashing); may hold stale entries too.
    private var insertedByID: [ManagedObjectID: ManagedObject] = [:]
    private var indexedCount = 0

    package init() {}

    package var isEmpty: Bool { inserted.isEmpty && changed.isEmpty }

    package mutating func didInsert(_ object: ManagedObject) { inserted.append(object) }

    package mutating func didChange(_ object: ManagedObject) { changed[ObjectIdentifier(object)] = object }

    package mutating func forget(_ object: ManagedObject) { changed[ObjectIdentifier(object)] = nil }

    /// The object inserted in `context` under this (temporary) ID, if it still is: amortized
    /// O(1), where a scan of the inserted objects made a bulk insert with relationships quadratic.
    package mutating func insertedObject(for id: ManagedObjectID, in context: ManagedObjectContext) -> ManagedObject? {
        while indexedCount < inserted.count {
            insertedByID[inserted[indexedCount].objectID] = inserted[indexedCount]
            indexedCount += 1
        }
        guard let object = insertedByID[id], object.objectID == id, object.isInsertedFlag, !object.isDeletedFlag, object.managedObjectContext === context else { return nil }
        return object
    }

    /// Inserted objects still inserted in `context`, in insertion order.
    package func liveInserted(in context: ManagedObjectContext) -> [ManagedObject] {
        inserted.filter { $0.isInsertedFlag && !$0.isDeletedFlag && $0.managedObjectContext === context }
    }

    /// Saved objects with changes still registered in `context`.
    package func liveChanged(in context: ManagedObjectContext) -> [ManagedObject] {
        changed.values.filter { $0.hasChanges && $0.managedObjectContext === context }
    }

    /// Every object held: inserted (live or stale) and changed.
    package var all: [ManagedObject] { inserted + Array(changed.values) }

    /// Drops stale inserted entries (after objects were deleted before their first save).
    package mutating func compactInserted(in context: ManagedObjectContext) {
        inserted = liveInserted(in: context)
        insertedByID.removeAll()
        indexedCount = 0
    }

    package mutating func removeAll() {
        inserted.removeAll()
        changed.removeAll()
        insertedByID.removeAll()
        indexedCount = 0
    }
}
