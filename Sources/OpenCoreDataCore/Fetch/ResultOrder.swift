import Foundation

/// The order of results sorted in memory (a context's unsaved changes applied to a fetch, a
/// fetched results controller keeping its results current): the sort keys, then the primary key
/// as SQLite's `ORDER BY …, Z_PK` does, and objects not saved yet last, in the order their IDs
/// were made. One rule, so that results kept current and a fresh fetch agree on ties.
package struct ResultOrder: Sendable {
    package let keys: [StoreSortKey]
    /// The fetched entity, in whose slot order the keys are.
    package let entity: EntityDescription
    /// Whether a key goes through a relationship (then values are read through the object's
    /// context).
    private let followsRelationships: Bool

    package init(_ keys: [StoreSortKey], entity: EntityDescription) {
        self.keys = keys
        self.entity = entity
        followsRelationships = keys.contains { !$0.path.isEmpty }
    }

    /// What an object is ordered by, taken when it was placed: the values of the sort keys and
    /// its ID. An object's values may change before anyone is told; its place follows this.
    package struct Key {
        package var values: [ManagedValue]
        package var id: ManagedObjectID
    }

    /// The object's key now (its values must be loaded; destinations through relationships are
    /// read as its context sees them).
    package func key(of object: ManagedObject) -> Key {
        let values = object.values
        guard followsRelationships else { return Key(values: keys.map { values[$0.slot] }, id: object.objectID) }
        let subject = EvaluationSubject(values: entity.adapt(values, from: object.entity), primaryKey: object.objectID.primaryKey,
                                        id: object.objectID, graph: object.managedObjectContext.map { ManagedObjectContext.CurrentGraph(context: $0) })
        return Key(values: keys.map { $0.value(subject) }, id: object.objectID)
    }

    /// The objects in this order, by their current values (each object's key taken once when
    /// it is read through relationships).
    package func sorted(_ objects: [ManagedObject]) -> [ManagedObject] {
        guard followsRelationships else { return objects.sorted(by: precedes) }
        return objects.map { (key: key(of: $0), object: $0) }.sorted { precedes($0.key, $1.key) }.map(\.object)
    }

    /// Whether `a` comes first, by the objects' own current values (no key through a relationship).
    private func precedes(_ a: ManagedObject, _ b: ManagedObject) -> Bool {
        let aValues = a.values, bValues = b.values
        for key in keys {
            let order = key.comparator.compare(aValues[key.slot], bValues[key.slot])
            if order != .orderedSame { return key.ascending ? order == .orderedAscending : order == .orderedDescending }
        }
        return Self.tieBreak(a.objectID, b.objectID)
    }

    /// Whether `a` comes first, by keys taken earlier.
    package func precedes(_ a: Key, _ b: Key) -> Bool {
        for (index, key) in keys.enumerated() {
            let order = key.comparator.compare(a.values[index], b.values[index])
            if order != .orderedSame { return key.ascending ? order == .orderedAscending : order == .orderedDescending }
        }
        return Self.tieBreak(a.id, b.id)
    }

    /// Whether two keys have the same sort values (they may differ only in the tie-break).
    package func sameSortValues(_ a: Key, _ b: Key) -> Bool {
        keys.indices.allSatisfy { keys[$0].comparator.compare(a.values[$0], b.values[$0]) == .orderedSame }
    }

    private static func tieBreak(_ a: ManagedObjectID, _ b: ManagedObjectID) -> Bool {
        switch (a.key, b.key) {
        case (.permanent(let x), .permanent(let y)): x < y
        case (.permanent, .temporary): true
        case (.temporary, .permanent): false
        case (.temporary(let x), .temporary(let y)): x < y
        }
    }
}
