import OpenCoreDataCore

/// The rows of a batch delete with rules (`BatchDeleteRules`) in Core Data's tables, once for
/// both SQL stores: the statements (`RelationalStatements`) run on the caller's session, inside
/// its write transaction, keys bound as lists of at most `chunk` values.
package struct RelationalDeleteRows<Session: SQLSession>: BatchDeleteRows {
    let session: Session
    let layout: RelationalLayout
    /// Whether deleted rows' values are read for history tombstones.
    let readsTombstones: Bool
    /// The values of a deleted row, read from column 2 on (the table's columns, by `mapping`):
    /// each store decodes its own cells.
    let values: (Session.Row, RelationalLayout.EntityMapping) throws -> [ManagedValue]
    let chunk: Int
    /// The deletions to record in history (with tombstone values when `readsTombstones`).
    package private(set) var history: [StoreHistoryChange] = []

    package init(session: Session, layout: RelationalLayout, readsTombstones: Bool, chunk: Int,
                 values: @escaping (Session.Row, RelationalLayout.EntityMapping) throws -> [ManagedValue]) {
        self.session = session
        self.layout = layout
        self.readsTombstones = readsTombstones
        self.chunk = chunk
        self.values = values
    }

    /// Runs `statement(keys)` once per chunk of `keys` (nothing when it answers `nil`); `row` is
    /// called for each result row.
    private func each(_ keys: [Int64], _ statement: ([Int64]) throws -> SQLFragment?, row: (Session.Row) throws -> Void = { _ in }) throws {
        for start in stride(from: 0, to: keys.count, by: chunk) {
            guard let fragment = try statement(Array(keys[start..<min(start + chunk, keys.count)])) else { return }
            try session.forEachRow(fragment, row)
        }
    }

    package mutating func rows(_ keys: [Int64], of root: EntityDescription) throws -> [(entity: EntityDescription, keys: [Int64])] {
        var groups = KeysByEntity()
        var found: [StoreHistoryChange] = []
        try each(keys, { [layout, readsTombstones] in try layout.deletedRowsQuery(root, withValues: readsTombstones, keys: $0) }) { row in
            guard let number = row.integer(0), let key = row.integer(1), let entity = layout.entitiesByNumber[Int(number)] else { return }
            let tombstone = readsTombstones ? try values(row, try layout.mapping(for: entity)) : nil
            found.append(StoreHistoryChange(type: .delete, entity: entity, primaryKey: key, values: tombstone))
            groups.append(key, of: entity)
        }
        history += found
        return groups.groups
    }

    package mutating func destinations(of relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws -> [Int64] {
        var result: [Int64] = []
        try each(keys, { [layout] in try layout.destinationKeysQuery(of: relationship, from: entity, keys: $0) }) { row in
            if let key = row.integer(0) { result.append(key) }
        }
        return result
    }

    package mutating func detach(_ relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws {
        try each(keys) { [layout] in try layout.detachStatement(relationship, keys: $0) }
    }

    package mutating func remove(_ keys: [Int64], of root: EntityDescription) throws {
        try each(keys) { [layout] in try layout.removeStatement(root, keys: $0) }
    }
}
