import Foundation

/// The order of results sorted in memory (a context's unsaved changes applied to a fetch, a
/// fetched results controller keeping its results current): the sort keys, then the primary key
/// as SQLite's `ORDER BY …, Z_PK` does, and objects not saved yet last, in the order their IDs
/// were made. One rule, so that results kept current and a fresh fetch agree on ties.
package struct ResultOrder: Sendable {
    package let keys: [StoreSortKey]

    package init(_ keys: [StoreSortKey]) {
        self.keys = keys
    }

    /// What an object is ordered by, taken when it was placed: the values of the sort keys and
    /// its ID. An object's values may change before anyone is told; its place follows this.
    package struct Key {
        package var values: [ManagedValue]
        package var id: ManagedObjectID
    }

    /// The object's key now (its values must be loaded).
    package func key(of object: ManagedObject) -> Key {
        let values = object.values
        return Key(values: keys.map { values[$0.slot] }, id: object.objectID)
    }

    /// Whether `a` comes first, by the objects' current values.
    package func precedes(_ a: ManagedObject, _ b: ManagedObject) -> Bool {
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
