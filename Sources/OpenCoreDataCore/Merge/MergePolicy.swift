import Foundation

/// How a save resolves conflicts with changes made elsewhere. Mirrors `NSMergePolicy`.
///
/// ```swift
/// context.mergePolicy = .mergeByPropertyObjectTrump
/// ```
///
/// | policy | a property both sides changed | a property only the store changed | a property only memory changed |
/// |---|---|---|---|
/// | `.error` (default) | the save throws 133020 with the conflicts | — | — |
/// | `.mergeByPropertyStoreTrump` | store | store | memory |
/// | `.mergeByPropertyObjectTrump` | memory | store | memory |
/// | `.overwrite` | memory | **memory** (the whole object is written) | memory |
/// | `.rollback` | store | store | **store** (local changes dropped) |
///
/// When the row was deleted underneath a changed object, the store-side policies (store trump,
/// rollback) accept the deletion and the object-side ones (object trump, overwrite) write the
/// object back under its key. Subclass to decide yourself: override
/// ``resolve(optimisticLockingConflicts:)`` or ``resolve(constraintConflicts:)`` and call `super`.
open class MergePolicy: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: the built-in policies are immutable; subclasses that add state must
    // keep it safe themselves (a policy is called on the saving context's queue).

    /// The built-in kinds of policy. Raw values are Core Data's `NSMergePolicyType`.
    public enum PolicyType: UInt, Sendable {
        /// Fail the save with the conflicts (`NSErrorMergePolicyType`).
        case error = 0
        /// Per property; the store wins where both changed (`NSMergeByPropertyStoreTrumpMergePolicyType`).
        case mergeByPropertyStoreTrump = 1
        /// Per property; memory wins where both changed (`NSMergeByPropertyObjectTrumpMergePolicyType`).
        case mergeByPropertyObjectTrump = 2
        /// The whole in-memory object is written (`NSOverwriteMergePolicyType`).
        case overwrite = 3
        /// Local changes are dropped for the store's version (`NSRollbackMergePolicyType`).
        case rollback = 4
    }

    /// This policy's kind.
    public let mergeType: PolicyType

    /// Makes a policy of a kind. Mirrors `NSMergePolicy(merge:)`.
    public init(merge type: PolicyType) {
        mergeType = type
    }

    /// Fails saves that conflict (the default).
    public static let error = MergePolicy(merge: .error)
    /// Per property, the store wins where both sides changed.
    public static let mergeByPropertyStoreTrump = MergePolicy(merge: .mergeByPropertyStoreTrump)
    /// Per property, memory wins where both sides changed.
    public static let mergeByPropertyObjectTrump = MergePolicy(merge: .mergeByPropertyObjectTrump)
    /// The in-memory object overwrites the row.
    public static let overwrite = MergePolicy(merge: .overwrite)
    /// The store's version replaces local changes.
    public static let rollback = MergePolicy(merge: .rollback)

    /// Resolves every conflict of a failed save: optimistic-locking conflicts first, then
    /// constraint conflicts. Throws to fail the save.
    open func resolve(mergeConflicts list: [Any]) throws {
        try resolve(optimisticLockingConflicts: list.compactMap { $0 as? MergeConflict })
        try resolve(constraintConflicts: list.compactMap { $0 as? ConstraintConflict })
    }

    /// Resolves version conflicts by changing the conflicting objects (on the saving context's
    /// queue); the save is then retried. The `.error` policy throws 133020.
    open func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
        guard !list.isEmpty else { return }
        if mergeType == .error {
            throw CoreDataError.mergeConflicts(list)
        }
        for conflict in list { apply(to: conflict) }
    }

    /// Resolves uniqueness-constraint conflicts found at save (on the saving context's queue);
    /// the save is then retried. The `.error` policy throws 133021 with the conflicts. The
    /// object-side policies (object trump, overwrite) keep the newest object with its values and
    /// write it over the existing row (upsert); the store-side ones (store trump, rollback)
    /// keep the stored values. Other conflicting objects are dropped from the save.
    open func resolve(constraintConflicts list: [ConstraintConflict]) throws {
        guard !list.isEmpty else { return }
        if mergeType == .error {
            throw CoreDataError.constraintConflicts(list)
        }
        for conflict in list {
            guard let context = conflict.conflictingObjects.first?.managedObjectContext else { continue }
            let objectWins = mergeType == .mergeByPropertyObjectTrump || mergeType == .overwrite
            context.resolve(conflict, keepingObjectValues: objectWins)
        }
    }

    /// Applies this policy's rule to one conflicting object: the policy decides, the object's
    /// context carries the decision out.
    private func apply(to conflict: MergeConflict) {
        let object = conflict.sourceObject
        object.managedObjectContext?.apply(decision(for: conflict), to: object)
    }

    /// This policy's decision for one conflicting object.
    private func decision(for conflict: MergeConflict) -> MergeDecision {
        let object = conflict.sourceObject
        guard let persisted = conflict.persisted else {
            // The row was deleted underneath.
            switch mergeType {
            case .mergeByPropertyStoreTrump, .rollback: return .acceptDeletion
            default: return .reinsert
            }
        }
        if object.isDeletedFlag {
            return mergeType == .rollback ? .revertDeletion(to: persisted) : .keepDeletion(over: persisted)
        }
        // Which of the object's changed slots are kept on top of the stored row.
        let base = object.snapshot?.values ?? persisted.values
        var kept = DirtySlots()
        for slot in persisted.values.indices {
            let mine = object.dirty.contains(slot)
            let theirs = persisted.values[slot] != base[slot]
            let keepMine: Bool = switch mergeType {
            case .mergeByPropertyStoreTrump: mine && !theirs
            case .mergeByPropertyObjectTrump: mine
            case .overwrite: true
            case .rollback, .error: false
            }
            if keepMine { kept.insert(slot) }
        }
        return .rebase(on: persisted, keeping: kept)
    }

    public var description: String { "MergePolicy(\(mergeType))" }
}
