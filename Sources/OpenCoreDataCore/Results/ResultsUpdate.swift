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
    /// of the others; it is updated when it was named as changed (`updated`).
    init(old: [LiveResults.Entry], oldSections: [LiveResults.Section], new: [LiveResults.Entry], newSections: [LiveResults.Section],
         updated: Set<ObjectIdentifier>, order: ResultOrder) {
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
        var oldIndex: [ObjectIdentifier: Int] = [:], newIndex = Set<ObjectIdentifier>()
        oldIndex.reserveCapacity(old.count)
        newIndex.reserveCapacity(new.count)
        for (index, entry) in old.enumerated() { oldIndex[ObjectIdentifier(entry.object)] = index }
        for entry in new { newIndex.insert(ObjectIdentifier(entry.object)) }
        for (index, entry) in old.enumerated() where !newIndex.contains(ObjectIdentifier(entry.object)) {
            objectChanges.append(.delete(entry.object, at: Self.indexPath(index, in: oldSections)))
        }
        // Kept objects (neither moved nor removed) must appear in the new order as in the old:
        // one that would come before a kept one it used to follow is moved instead.
        var lastKept = -1
        for (index, entry) in new.enumerated() {
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
                    objectChanges.append(.update(entry.object, at: Self.indexPath(before, in: oldSections), now: Self.indexPath(index, in: newSections)))
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
