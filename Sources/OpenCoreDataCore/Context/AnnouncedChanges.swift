import Foundation

/// The object sets of the last objects-did-change notification, kept so that the did-save
/// notification that usually follows with the same objects reuses them instead of hashing every
/// object again (a save of N changed objects posts both: ~360 instructions per object each).
///
/// Reuse is decided by the lists alone: the sets are handed out again only for lists holding the
/// same objects in the same order, so a stale entry can cost memory until cleared, never a wrong
/// notification. Owned by the context's queue (a field of its `ObjectGraph`); cleared when a save
/// is announced and when the context forgets its changes.
package struct AnnouncedChanges {
    private var lists: (inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) = ([], [], [])
    private var info: [String: Set<ManagedObject>]?

    package init() {}

    /// The notification's user info for these lists: the sets made last time when the lists are
    /// the same, else new sets (kept for the next call).
    package mutating func userInfo(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) -> [String: Set<ManagedObject>] {
        if let info, lists.inserted.elementsEqual(inserted, by: ===), lists.updated.elementsEqual(updated, by: ===),
           lists.deleted.elementsEqual(deleted, by: ===) {
            return info
        }
        let made = [NSInsertedObjectsKey: Set(inserted), NSUpdatedObjectsKey: Set(updated), NSDeletedObjectsKey: Set(deleted)]
        lists = (inserted, updated, deleted)
        info = made
        return made
    }

    /// Drops the kept lists and sets (and the references they hold).
    package mutating func removeAll() {
        lists = ([], [], [])
        info = nil
    }
}
