import Foundation

/// A uniqueness-constraint conflict found at save: objects being saved that share the values of
/// a constraint with each other or with a row already in the store. Mirrors
/// `NSConstraintConflict`.
// @unchecked Sendable: like MergeConflict, it travels in errors; its objects stay on their
// context's queue and are only used there.
public final class ConstraintConflict: @unchecked Sendable, CustomStringConvertible {
    /// The property names of the violated constraint.
    public let constraint: [String]
    /// The values those properties share, by name.
    public let constraintValues: [String: Any]
    /// The object for the row already in the store, when there is one.
    public let databaseObject: ManagedObject?
    /// The stored values of that row, by name (`NSNull` for nil).
    public let databaseSnapshot: [String: Any]?
    /// The objects being saved that conflict (oldest first).
    public let conflictingObjects: [ManagedObject]
    /// Their values when the conflict was found, by name.
    public let conflictingSnapshots: [[String: Any]]
    /// The stored row (for the built-in policies).
    package var persisted: StoreRow?

    /// Makes a constraint conflict.
    public init(constraint: [String], databaseObject: ManagedObject?, databaseSnapshot: [String: Any]?, conflictingObjects: [ManagedObject],
                conflictingSnapshots: [[String: Any]]) {
        self.constraint = constraint
        let source = databaseSnapshot ?? conflictingSnapshots.first ?? [:]
        self.constraintValues = source.filter { constraint.contains($0.key) }
        self.databaseObject = databaseObject
        self.databaseSnapshot = databaseSnapshot
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots
    }

    public var description: String {
        let values = constraint.map { "\($0) = \(constraintValues[$0].map { "\($0)" } ?? "nil")" }.joined(separator: ", ")
        let objects = conflictingObjects.map(\.objectID.description).joined(separator: ", ")
        return "ConstraintConflict(\(values); objects: \(objects)\(databaseObject.map { "; stored: \($0.objectID)" } ?? ""))"
    }
}

extension CoreDataError {
    /// 133021 with the constraint conflicts.
    package static func constraintConflicts(_ list: [ConstraintConflict]) -> CoreDataError {
        let details = list.map(\.description).joined(separator: "; ")
        var error = CoreDataError(.managedObjectConstraintMerge,
                                  """
                                      Could not save: \(list.count) uniqueness constraint conflict(s): \
                                      \(details). Change the values, or set a merge policy \
                                      (.mergeByPropertyObjectTrump upserts).
                                      """,
                                  affectedObjectIDs: list.flatMap { $0.conflictingObjects.map(\.objectID) })
        error.constraintConflicts = list
        return error
    }
}
