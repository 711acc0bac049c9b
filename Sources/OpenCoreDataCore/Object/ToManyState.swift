/// The members of one to-many relationship of one object: what the store (or parent context)
/// held when they were loaded, and what changed since. Owned by the object's context queue.
///
/// Changes are kept as additions and removals, so that inverse maintenance can record
/// "memo joined folder" without loading the folder's other members; loading merges them in.
package struct ToManyState {
    /// The committed members in store order; `nil` until loaded.
    private(set) var loaded: [ManagedObjectID]?
    private var loadedSet: Set<ManagedObjectID> = []
    /// Added since loading (or since the last save), in order.
    private(set) var added: [ManagedObjectID] = []
    private var addedSet: Set<ManagedObjectID> = []
    /// Removed since loading (or since the last save).
    private(set) var removed: Set<ManagedObjectID> = []
    /// For ordered relationships whose order was set: the members in their new order.
    private(set) var explicitOrder: [ManagedObjectID]?

    package init() {}

    /// A state with no members, loaded (for new objects).
    package static var empty: ToManyState {
        var state = ToManyState()
        state.loaded = []
        return state
    }

    package var isLoaded: Bool { loaded != nil }
    package var hasChanges: Bool { !added.isEmpty || !removed.isEmpty || explicitOrder != nil }

    /// The current members, when loaded (in order: committed ones, then added ones, unless an
    /// order was set).
    package var members: [ManagedObjectID]? {
        if let explicitOrder, loaded != nil { return explicitOrder }
        return naturalOrder
    }

    /// The members without a set order: committed ones, then added ones.
    private var naturalOrder: [ManagedObjectID]? {
        guard let loaded else { return nil }
        if added.isEmpty && removed.isEmpty { return loaded }
        return loaded.filter { !removed.contains($0) } + added.filter { !loadedSet.contains($0) }
    }

    /// Sets the order of the members (an ordered relationship; the state is loaded and the
    /// membership already matches `order`).
    package mutating func reorder(_ order: [ManagedObjectID]) {
        // Compared with the order the members would have without one (not with `members`, which
        // is the order set before: an order equal to it must stay set).
        explicitOrder = order == naturalOrder ? nil : order
    }

    package func contains(_ id: ManagedObjectID) -> Bool? {
        if addedSet.contains(id) { return true }
        if removed.contains(id) { return false }
        return loaded == nil ? nil : loadedSet.contains(id)
    }

    /// Takes the committed members (keeping the changes made since on top).
    package mutating func load(_ members: [ManagedObjectID]) {
        loaded = members
        loadedSet = Set(members)
    }

    /// Forgets the committed members (they changed elsewhere); changes stay when `keepingChanges`.
    package mutating func unload(keepingChanges: Bool) {
        loaded = nil
        loadedSet = []
        if !keepingChanges { clearChanges() }
    }

    /// Returns whether the membership changed.
    @discardableResult
    package mutating func insert(_ id: ManagedObjectID) -> Bool {
        if removed.remove(id) != nil {
            explicitOrder?.append(id)
            return true
        }
        if loadedSet.contains(id) || addedSet.contains(id) { return false }
        added.append(id)
        addedSet.insert(id)
        explicitOrder?.append(id)
        return true
    }

    /// Returns whether the membership changed (as far as known when not loaded).
    @discardableResult
    package mutating func remove(_ id: ManagedObjectID) -> Bool {
        explicitOrder?.removeAll { $0 == id }
        if addedSet.remove(id) != nil {
            added.removeAll { $0 == id }
            return true
        }
        if loaded != nil && !loadedSet.contains(id) { return false }
        return removed.insert(id).inserted
    }

    /// After a save: the current members become the committed ones.
    package mutating func commit() {
        if let members { load(members) }
        clearChanges()
    }

    private mutating func clearChanges() {
        added = []
        addedSet = []
        removed = []
        explicitOrder = nil
    }

    /// Replaces IDs (temporary ones that became permanent).
    package mutating func remap(_ map: [ManagedObjectID: ManagedObjectID]) {
        func swap(_ id: ManagedObjectID) -> ManagedObjectID { map[id] ?? id }
        if let loaded { load(loaded.map(swap)) }
        added = added.map(swap)
        addedSet = Set(added)
        removed = Set(removed.map(swap))
        explicitOrder = explicitOrder?.map(swap)
    }

}

extension ManagedObject {
    /// The to-many changes not saved yet, by to-many index (what a child pushes to its parent).
    package var toManyChanges: [Int: (added: [ManagedObjectID], removed: [ManagedObjectID])] {
        var result: [Int: (added: [ManagedObjectID], removed: [ManagedObjectID])] = [:]
        for (index, state) in toMany.enumerated() where state.hasChanges {
            result[index] = (state.added, Array(state.removed))
        }
        return result
    }
}
