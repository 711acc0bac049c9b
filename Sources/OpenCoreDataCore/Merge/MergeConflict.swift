/// One optimistic-locking conflict found at save: an object changed (or deleted) in the store
/// since the context read it. Mirrors `NSMergeConflict`.
///
/// ``sourceObject`` belongs to the saving context: use it only on that context's queue.
// @unchecked Sendable: the conflict travels inside a `CoreDataError` (errors are Sendable), but
// its `sourceObject` stays confined to its context's queue, exactly as in Core Data's NSError.
public final class MergeConflict: @unchecked Sendable, CustomStringConvertible {
    /// The object whose save conflicted.
    public let sourceObject: ManagedObject
    /// The values the context last read (its snapshot), by key.
    public let objectSnapshot: [String: Any]?
    /// The values in the coordinator's row cache, when cached.
    public let cachedSnapshot: [String: Any]?
    /// The values now in the store; `nil` when the row was deleted.
    public let persistedSnapshot: [String: Any]?
    /// The version the context read.
    public let oldVersionNumber: Int
    /// The version in the store now; 0 when the row was deleted.
    public let newVersionNumber: Int

    /// The row in the store now, for the merge policies.
    package let persisted: RowSnapshot?

    /// Makes a conflict.
    public convenience init(sourceObject: ManagedObject, objectSnapshot: [String: Any]?, cachedSnapshot: [String: Any]?,
                            persistedSnapshot: [String: Any]?, oldVersionNumber: Int, newVersionNumber: Int) {
        self.init(sourceObject: sourceObject, objectSnapshot: objectSnapshot, cachedSnapshot: cachedSnapshot, persistedSnapshot: persistedSnapshot,
                  oldVersionNumber: oldVersionNumber, newVersionNumber: newVersionNumber, persisted: nil)
    }

    package init(sourceObject: ManagedObject, objectSnapshot: [String: Any]?, cachedSnapshot: [String: Any]?, persistedSnapshot: [String: Any]?,
                 oldVersionNumber: Int, newVersionNumber: Int, persisted: RowSnapshot?) {
        self.persisted = persisted
        self.sourceObject = sourceObject
        self.objectSnapshot = objectSnapshot
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
        self.oldVersionNumber = oldVersionNumber
        self.newVersionNumber = newVersionNumber
    }

    public var description: String {
        "MergeConflict(\(sourceObject.objectID), version \(oldVersionNumber) → \(newVersionNumber))"
    }
}
