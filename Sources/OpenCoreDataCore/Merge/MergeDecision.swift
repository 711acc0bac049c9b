/// What a merge policy decides for one object in conflict with the store; the object's context
/// carries it out (`ManagedObjectContext.apply(_:to:)`), so no policy writes object state itself.
package enum MergeDecision {
    /// The row is gone and so is the object here: deleted, nothing to save.
    case acceptDeletion
    /// The row is gone but the object stays: written again under its key, every value.
    case reinsert
    /// The object's delete is dropped: it becomes the stored row, unchanged.
    case revertDeletion(to: RowSnapshot)
    /// The object's delete stays, on top of the newer stored row.
    case keepDeletion(over: RowSnapshot)
    /// The object takes the stored row, keeping the `kept` slots' values as its changes.
    case rebase(on: RowSnapshot, keeping: DirtySlots)
}
