import Foundation

/// How results changed, in the terms a table view applies in one batch: section deletions and
/// object deletions and move sources at the old index paths, then section insertions and object
/// insertions and move destinations at the new ones; updates name the old index path (and the
/// new one). Objects that are neither removed nor moved keep their order relative to each other,
/// so applying the changes to the old results gives the new results exactly.
package struct ResultsUpdate {
    package enum ObjectChange {
        case insert(ManagedObject, at: IndexPath)
        case delete(ManagedObject, at: IndexPath)
        case move(ManagedObject, from: IndexPath, to: IndexPath)
        case update(ManagedObject, at: IndexPath, now: IndexPath)
    }

    /// The results before the change (the deleted sections' objects are read from them).
    package let old: [LiveResults.Entry]
    package var deletedSections: [(index: Int, section: LiveResults.Section)] = []
    package var insertedSections: [(index: Int, section: LiveResults.Section)] = []
    package var objectChanges: [ObjectChange] = []
    /// Some result now has another object ID (a save gave it its permanent one).
    package var identifiersChanged = false

    package var isEmpty: Bool { deletedSections.isEmpty && insertedSections.isEmpty && objectChanges.isEmpty && !identifiersChanged }
    package var hasChanges: Bool { !(deletedSections.isEmpty && insertedSections.isEmpty && objectChanges.isEmpty) }

    /// The changes from `old` to `new`. An object in both is moved when what it is sorted or
    /// sectioned by changed (Core Data's rule), or when keeping it in place would break the order
    /// of the others; it is updated when it was named as changed (`updated`). With `onlyNamed`,
    /// only the named objects can have entered, left or moved — their old entries are marked
    /// `isLeaving`, their new ones `isJoining` — and the others are in the same order in both (the
    /// incremental case: O(n) without hashing every object).
    init(old: [LiveResults.Entry], oldSections: [LiveResults.Section], new: [LiveResults.Entry], newSections: [LiveResults.Section],
         named: Set<ObjectIdentifier>, updated: Set<ObjectIdentifier>, onlyNamed: Bool, order: ResultOrder) {
        self.old = old
        var oldSectionIndex: [String: Int] = [:], newSectionIndex: [String: Int] = [:]
        for (index, section) in oldSections.enumerated() { oldSectionIndex[section.name] = index }
        for (index, section) in newSections.enumerated() { newSectionIndex[section.name] = index }
        for (index, section) in oldSections.enumerated() where newSectionIndex[section.name] == nil {
            deletedSections.append((index, section))
        }
        for (index, section) in newSections.enumerated() where oldSectionIndex[section.name] == nil {
            insertedSections.append((index, section))
        }
        // Where each object was: every object, or only the named ones (their old entries are
        // marked leaving, their new ones joining).
        var oldIndex: [ObjectIdentifier: Int] = [:], present = Set<ObjectIdentifier>()
        oldIndex.reserveCapacity(onlyNamed ? named.count : old.count)
        for index in old.indices where !onlyNamed || old[index].isLeaving {
            oldIndex[ObjectIdentifier(old[index].object)] = index
        }
        for entry in new where !onlyNamed || entry.isJoining {
            present.insert(ObjectIdentifier(entry.object))
        }
        for (id, index) in oldIndex.sorted(by: { $0.value < $1.value }) where !present.contains(id) {
            objectChanges.append(.delete(old[index].object, at: Self.indexPath(index, in: oldSections)))
        }
        // Kept objects (neither moved nor removed) must appear in the new order as in the old:
        // one that would come before a kept one it used to follow is moved instead.
        var lastKept = -1
        var scan = 0    // with onlyNamed: the next old position of an object not named
        for (index, entry) in new.enumerated() {
            if onlyNamed && !entry.isJoining {
                while old[scan].isLeaving { scan += 1 }
                let before = scan
                scan += 1
                if before < lastKept {
                    objectChanges.append(.move(entry.object, from: Self.indexPath(before, in: oldSections),
                                               to: Self.indexPath(index, in: newSections)))
                } else {
                    lastKept = before
                }
                continue
            }
            let id = ObjectIdentifier(entry.object)
            guard let before = oldIndex[id] else {
                objectChanges.append(.insert(entry.object, at: Self.indexPath(index, in: newSections)))
                continue
            }
            let previous = old[before]
            if previous.key.id != entry.key.id { identifiersChanged = true }
            let moved = previous.section != entry.section || !order.sameSortValues(previous.key, entry.key) || before < lastKept
            if moved {
                objectChanges.append(.move(entry.object, from: Self.indexPath(before, in: oldSections), to: Self.indexPath(index, in: newSections)))
            } else {
                lastKept = before
                if updated.contains(id) {
                    objectChanges.append(.update(entry.object, at: Self.indexPath(before, in: oldSections),
                                                 now: Self.indexPath(index, in: newSections)))
                }
            }
        }
    }

    /// The index path of the result at `index` (sections are in order; binary search).
    static func indexPath(_ index: Int, in sections: [LiveResults.Section]) -> IndexPath {
        var low = 0, high = sections.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sections[middle].start <= index { low = middle } else { high = middle - 1 }
        }
        return IndexPath(item: index - (sections.isEmpty ? 0 : sections[low].start), section: low)
    }
}
