import Foundation

/// One successful save, as `Sendable` values: what changed, and the new committed state of the
/// updated rows. Delivered by ``ManagedObjectContext/didSaveObjectIDsNotification``, by the
/// async sequences ``ManagedObjectContext/didSaveEvents`` and
/// ``PersistentStoreCoordinator/didSaveEvents``, and to contexts that
/// ``ManagedObjectContext/automaticallyMergesChangesFromParent``.
public struct SaveEvent: Sendable {
    /// Objects inserted by the save.
    public var insertedObjectIDs: Set<ManagedObjectID>
    /// Objects updated by the save.
    public var updatedObjectIDs: Set<ManagedObjectID>
    /// Objects deleted by the save.
    public var deletedObjectIDs: Set<ManagedObjectID>
    /// The saving context's name.
    public var contextName: String?
    /// The saving context's transaction author.
    public var transactionAuthor: String?
    /// The committed state of the updated rows after the save.
    package var snapshots: [ManagedObjectID: RowSnapshot]
    /// The saving context (to skip it when broadcasting).
    package var source: ObjectIdentifier?
    /// Whether merging reads updated rows from the store, not the row cache (changes made by
    /// another coordinator or process, which this coordinator's cache has not seen).
    package var readsFreshRows = false
    /// The userInfo key that asks for `readsFreshRows` (set by history notifications).
    package static let readsFreshRowsKey = "OpenCoreData.readsFreshRows"

    /// Makes an event from object IDs (for merging changes learned elsewhere).
    public init(insertedObjectIDs: Set<ManagedObjectID> = [], updatedObjectIDs: Set<ManagedObjectID> = [],
                deletedObjectIDs: Set<ManagedObjectID> = [], contextName: String? = nil, transactionAuthor: String? = nil) {
        self.insertedObjectIDs = insertedObjectIDs
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
        self.contextName = contextName
        self.transactionAuthor = transactionAuthor
        self.snapshots = [:]
        self.source = nil
    }

    /// The `userInfo` of the object-ID notification.
    var userInfo: [String: Set<ManagedObjectID>] {
        [NSInsertedObjectIDsKey: insertedObjectIDs, NSUpdatedObjectIDsKey: updatedObjectIDs, NSDeletedObjectIDsKey: deletedObjectIDs]
    }
}

/// Delivers values to any number of `AsyncStream`s.
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private let continuations = Locked<[UUID: AsyncStream<Event>.Continuation]>([:])

    package init() {}

    package var hasSubscribers: Bool { continuations.withLock { !$0.isEmpty } }

    package func stream() -> AsyncStream<Event> {
        AsyncStream { continuation in
            let id = UUID()
            continuations.withLock { $0[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    package func send(_ event: Event) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}
