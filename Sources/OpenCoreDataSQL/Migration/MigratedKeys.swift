import OpenCoreDataCore

/// The new key and entity of each old row a migration copies, for one old table: three arrays
/// in the old keys' order (the table is read `ORDER BY Z_PK`), looked up by binary search.
///
/// A dictionary per row (and one more per destination entity) cost about 4,600 instructions a
/// row, a fifth of a lightweight migration of a table that SQLite copies by itself; appending to
/// these arrays costs a few dozen.
struct MigratedKeys {
    /// The old rows' keys, ascending.
    private var oldKeys: [Int64] = []
    /// Each row's new key.
    private var newKeys: [Int64] = []
    /// Each row's destination entity, as an index into `entities`.
    private var destinations: [UInt32] = []
    /// The destination entities of the table's rows, in the order first met.
    private(set) var entities: [EntityDescription] = []

    /// Adds a row after those already added (its old key is larger).
    mutating func append(oldKey: Int64, newKey: Int64, entity index: Int) {
        oldKeys.append(oldKey)
        newKeys.append(newKey)
        destinations.append(UInt32(index))
    }

    /// The index in `entities` of `entity`, added when new.
    mutating func index(of entity: EntityDescription) -> Int {
        if let index = entities.firstIndex(where: { $0 === entity }) { return index }
        entities.append(entity)
        return entities.count - 1
    }

    /// The new key and entity of the old row `key`; nil when the migration does not copy it.
    subscript(key: Int64) -> (key: Int64, entity: EntityDescription)? {
        var low = 0, high = oldKeys.count
        while low < high {
            let middle = (low + high) / 2
            if oldKeys[middle] < key { low = middle + 1 } else { high = middle }
        }
        guard low < oldKeys.count, oldKeys[low] == key else { return nil }
        return (newKeys[low], entities[Int(destinations[low])])
    }

    /// The old keys of the rows that become objects of `entity`, ascending.
    func oldKeys(of entity: EntityDescription) -> [Int64] {
        guard let index = entities.firstIndex(where: { $0 === entity }).map(UInt32.init) else { return [] }
        if entities.count == 1 { return oldKeys }
        return destinations.indices.filter { destinations[$0] == index }.map { oldKeys[$0] }
    }

    /// Each row of `entity`: its new key and its old key.
    func forEachRow(of entity: EntityDescription, _ body: (_ newKey: Int64, _ oldKey: Int64) -> Void) {
        guard let index = entities.firstIndex(where: { $0 === entity }).map(UInt32.init) else { return }
        for row in destinations.indices where destinations[row] == index { body(newKeys[row], oldKeys[row]) }
    }
}
