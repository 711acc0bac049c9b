/// Whether an object is in its context's list of changed objects (`PendingChanges`), kept on
/// the object so that listing and forgetting it cost no hashing. Queue-owned, like the object.
package enum ChangedListing: UInt8 {
    /// Not in the list.
    case none
    /// In the list, and one of the context's pending changes.
    case listed
    /// Still in the list, but forgotten (refreshed, unregistered, turned into an insert): skipped
    /// until it is listed again or the list is compacted.
    case forgotten
}

/// A context's unsaved objects, held strongly until saved. Owned by the context's queue.
///
/// Inserted objects are kept in insertion order in an array (saves allocate keys in that order,
/// and an insert costs an append, not a hash); changed and deleted objects that were saved
/// before are kept in a second array, in the order they first changed, with a mark on each
/// object (``ChangedListing``) instead of a dictionary by identity: listing an object is a
/// check and an append, forgetting it a write to the mark. Forgotten entries stay until they
/// are more than half the list, then go in one pass.
package struct PendingChanges {
    /// Inserted objects, in insertion order. May hold stale entries (deleted before saving,
    /// rolled back); `liveInserted(in:)` filters them.
    private(set) var inserted: [ManagedObject] = []
    /// Saved objects with changes (updated or deleted), each once, forgotten ones included.
    private var changedList: [ManagedObject] = []
    /// How many entries of `changedList` are forgotten.
    private var forgottenCount = 0
    /// `inserted` by ID, built on the first lookup and extended on later ones (a bulk insert that
    /// never looks objects up by temporary ID pays no hashing); may hold stale entries too.
    private var insertedByID: [ManagedObjectID: ManagedObject] = [:]
    private var indexedCount = 0

    package init() {}

    package mutating func didInsert(_ object: ManagedObject) { inserted.append(object) }

    /// Lists a saved object among the changes (once).
    package mutating func didChange(_ object: ManagedObject) {
        switch object.changedListing {
        case .listed: break
        case .none:
            changedList.append(object)
            object.changedListing = .listed
        case .forgotten:
            object.changedListing = .listed
            forgottenCount -= 1
        }
    }

    /// Takes an object off the changes.
    package mutating func forget(_ object: ManagedObject) {
        guard object.changedListing == .listed else { return }
        object.changedListing = .forgotten
        forgottenCount += 1
        if forgottenCount > 64 && forgottenCount * 2 > changedList.count { compactChanged() }
    }

    /// Drops the forgotten entries of the changed list.
    private mutating func compactChanged() {
        changedList.removeAll { object in
            guard object.changedListing == .forgotten else { return false }
            object.changedListing = .none
            return true
        }
        forgottenCount = 0
    }

    /// Saved objects listed as changed (whether or not they still have changes).
    package var changed: LazyFilterSequence<[ManagedObject]> {
        changedList.lazy.filter { $0.changedListing == .listed }
    }

    /// The object inserted in `context` under this (temporary) ID, if it still is: amortized
    /// O(1), where a scan of the inserted objects made a bulk insert with relationships quadratic.
    package mutating func insertedObject(for id: ManagedObjectID, in context: ManagedObjectContext) -> ManagedObject? {
        while indexedCount < inserted.count {
            insertedByID[inserted[indexedCount].objectID] = inserted[indexedCount]
            indexedCount += 1
        }
        guard let object = insertedByID[id], object.objectID == id, Self.isLiveInsert(object, in: context) else { return nil }
        return object
    }

    /// Whether an entry of `inserted` is still inserted in `context`.
    private static func isLiveInsert(_ object: ManagedObject, in context: ManagedObjectContext) -> Bool {
        object.isInsertedFlag && !object.isDeletedFlag && object.belongs(to: context)
    }

    /// Whether an entry of `changedList` is listed and still has changes in `context`.
    private static func isLiveChange(_ object: ManagedObject, in context: ManagedObjectContext) -> Bool {
        object.changedListing == .listed && object.hasChanges && object.belongs(to: context)
    }

    /// Inserted objects still inserted in `context`, in insertion order.
    package func liveInserted(in context: ManagedObjectContext) -> [ManagedObject] {
        Array(liveInserts(in: context))
    }

    /// Whether anything waits to be saved in `context`: a live insert or a listed object with
    /// changes (without building either list).
    package func hasLiveChanges(in context: ManagedObjectContext) -> Bool {
        inserted.contains { Self.isLiveInsert($0, in: context) } || changedList.contains { Self.isLiveChange($0, in: context) }
    }

    /// Saved objects with changes still registered in `context`.
    package func liveChanged(in context: ManagedObjectContext) -> [ManagedObject] {
        Array(liveChanges(in: context))
    }

    /// The objects of `liveInserted(in:)` and `liveChanged(in:)`, for one pass, without building
    /// the lists (each is tested when the pass reaches it; the pass walks the lists as they were
    /// when it began).
    package func liveInserts(in context: ManagedObjectContext) -> LazyFilterSequence<[ManagedObject]> {
        inserted.lazy.filter { Self.isLiveInsert($0, in: context) }
    }

    package func liveChanges(in context: ManagedObjectContext) -> LazyFilterSequence<[ManagedObject]> {
        changedList.lazy.filter { Self.isLiveChange($0, in: context) }
    }

    /// Every object held: inserted (live or stale) and changed.
    package var all: [ManagedObject] { inserted + changed }

    /// Calls `body` with every object of ``all``, in that order, without building the list (a
    /// save's passes over 100,000 objects each paid a retain, a release and a cache miss per object
    /// for the list alone).
    package func forEachHeld(_ body: (ManagedObject) throws -> Void) rethrows {
        for object in inserted { try body(object) }
        for object in changedList where object.changedListing == .listed { try body(object) }
    }

    /// Drops stale inserted entries (after objects were deleted before their first save).
    package mutating func compactInserted(in context: ManagedObjectContext) {
        inserted = liveInserted(in: context)
        insertedByID.removeAll()
        indexedCount = 0
    }

    package mutating func removeAll() {
        inserted.removeAll()
        for object in changedList { object.changedListing = .none }
        changedList.removeAll()
        forgottenCount = 0
        insertedByID.removeAll()
        indexedCount = 0
    }
}
