/// Where an object is in its life, as its context sees it: one byte of its ``ObjectState``,
/// moved only by the state's transitions, each of which switches on the phase it starts from and
/// refuses a move the table below does not list (docs/Architecture.md, "An object's life").
///
/// The raw values are bit sets, so that the questions asked on every property access (is it a
/// fault, inserted, deleted) are one bit test: 1 fault, 2 inserted, 4 deleted, 8 inaccessible,
/// 16 detached. "Updated" is not a phase: it is a loaded object with changed slots.
///
/// ```
/// transition               from                                    to
/// insert                   detached, inserted, insertedDeleted     inserted
/// receiveInsert            detached, fault                         inserted
/// becomeFault              detached, loaded, fault, deleted,       fault
///                          deletedFault, inaccessible
/// fulfil                   detached, fault, loaded                 loaded
///                          deletedFault                            deleted
/// rebase                   loaded, fault                           loaded
///                          deleted, deletedFault                   deleted
/// becomeInaccessible       fault, deleted, deletedFault,           inaccessible
///                          inaccessible
/// delete                   loaded / fault / inserted               deleted / deletedFault / insertedDeleted
/// undelete                 deleted / deletedFault /                loaded / fault / inserted / fault
///                          insertedDeleted / inaccessible
/// commit                   inserted, loaded                        loaded
/// forgetInsert             inserted, insertedDeleted               detached
/// discardChanges           loaded, fault                           (unchanged)
/// acceptDeletionElsewhere  loaded, deleted / fault, deletedFault   deleted / deletedFault
/// reinsert                 loaded, deleted                         inserted
/// revertDeletion           deleted, deletedFault                   loaded
/// keepDeletion             deleted, deletedFault                   (unchanged)
/// becomeStored             inserted                                loaded
/// ```
///
/// Writes to values (`write`, `restore`, `markChanged`, …) are not moves: a loaded object with
/// changed slots is "updated". A saved deletion leaves the object `deleted` and in no context; an
/// insert deleted before any save leaves it `insertedDeleted` and in no context (redo inserts it
/// again).
package enum ObjectPhase: UInt8, Sendable, CustomStringConvertible {
    /// Values loaded, committed (or with unsaved changes to its slots: "updated").
    case loaded = 0
    /// Registered without values: they load from the store (or the parent) on first use.
    case fault = 1
    /// Inserted and not saved yet.
    case inserted = 2
    /// Loaded, and to be deleted at the next save.
    case deleted = 4
    /// A fault to be deleted at the next save (its values load when the save needs them).
    case deletedFault = 5
    /// Inserted and then deleted before any save: the save forgets it.
    case insertedDeleted = 6
    /// A fault whose row could not be read: reads as deleted, with nil values
    /// (`shouldDeleteInaccessibleFaults`); the next save or reset discards it.
    case inaccessible = 12
    /// In no context: made without one, or an insert that was forgotten (its values are its own).
    case detached = 16

    package var isFault: Bool { rawValue & 1 != 0 }
    package var isInserted: Bool { rawValue & 2 != 0 }
    package var isDeleted: Bool { rawValue & 4 != 0 }
    package var isInaccessible: Bool { rawValue & 8 != 0 }

    package var description: String {
        switch self {
        case .loaded: "loaded"
        case .fault: "fault"
        case .inserted: "inserted"
        case .deleted: "deleted"
        case .deletedFault: "deleted fault"
        case .insertedDeleted: "inserted and deleted"
        case .inaccessible: "inaccessible"
        case .detached: "detached"
        }
    }
}
