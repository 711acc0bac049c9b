import Foundation

// Faults that cannot be fulfilled: the row is gone (deleted by another context or process) or
// the store could not read it. Core Data's answer, followed here, is
// `shouldDeleteInaccessibleFaults`: the object reads as deleted with nil/zero values instead of
// killing the process, and the next save or reset discards it. Runs on the context's queue.
extension ManagedObjectContext {
    /// Called by an object whose fault could not be fulfilled.
    package func faultIsInaccessible(_ object: ManagedObject, reason: String) {
        guard shouldDeleteInaccessibleFaults else {
            preconditionFailure("""
                CoreData could not fulfill a fault for \(object.objectID): \(reason). Set \
                shouldDeleteInaccessibleFaults to true (the default) to read such objects as deleted, or check \
                with existingObject(with:) before using an object that may have been deleted elsewhere.
                """)
        }
        let wasDeleted = object.isDeletedFlag
        object.state.becomeInaccessible(slotCount: object.entity.valueSlotCount, toManyCount: object.entity.toManyRelationships.count)
        guard !wasDeleted else { return }
        // Deleted without delete propagation: nothing is known of its relationships.
        graph.holdChanged(object)
    }

    /// Before a save: fires the faults of deleted objects (their values go to history tombstones
    /// and delete rules) and discards those that turn out inaccessible, which have no row to
    /// delete. Their store rows, if any, are left as they are.
    func discardInaccessibleObjects() {
        for object in graph.pending.liveChanges(in: self) where object.isDeletedFlag {
            if object.isFaultFlag { object.willAccessValue() }
            if object.isInaccessibleFlag {
                graph.unregister(object)
                object.managedObjectContext = nil
            }
        }
    }
}
