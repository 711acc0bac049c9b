import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    package func batchInsert(entity: EntityDescription, rows: [[ManagedValue]], author: HistoryAuthor) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: entity)
        let rootNumber = try layout.mapping(for: entity.rootEntity).entityNumbers[0]
        // Rows colliding with the first uniqueness constraint update the row they collide with.
        let conflictColumns = entity.upsertConstraint?.properties.compactMap { key in entity.slotByName[key].map { mapping.columns[$0] } } ?? []
        var sql = RelationalLayout.insertStatement(mapping.table, columns: mapping.columns)
        if !conflictColumns.isEmpty {
            let updates = mapping.columns.map { SQLFragment("\(identifier: $0) = excluded.\(identifier: $0)") } + ["Z_OPT = Z_OPT + 1"]
            // An upserted row keeps its key: read the keys back.
            sql += """
                 ON CONFLICT (\(SQLFragment.identifiers(conflictColumns))) DO UPDATE SET \(SQLFragment.joined(updates, separator: ", ")) \
                RETURNING Z_PK
                """
        }
        return try writeTransaction { db in
            var next = try reserveKeys(db, root: entity.rootEntity, entityNumber: rootNumber, count: rows.count)
            let insert = try db.cachedStatement(sql.rendered(for: .sqlite).sql)
            let entityNumber = Int64(mapping.entityNumbers[0])
            var keys: [Int64] = []
            keys.reserveCapacity(rows.count)
            for values in rows {
                insert.bind(next, at: 1)
                insert.bind(entityNumber, at: 2)
                try insert.bind(values, from: 3)
                if try insert.step() { keys.append(insert.int64(at: 0)) } else { keys.append(next) }
                insert.reset()
                next += 1
            }
            if tracksHistory {
                // An upserted row is an update in history (its key was not the one reserved).
                let reserved = next - Int64(rows.count)
                try recordHistory(db, layout: layout, author: author, changes: keys.enumerated().map { offset, key in
                    StoreHistoryChange(type: key == reserved + Int64(offset) ? .insert : .update, entity: entity, primaryKey: key)
                })
            }
            return keys
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let condition = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .sqlite).condition
        let sets = ["Z_OPT = Z_OPT + 1"] + values.map { SQLFragment("\(identifier: mapping.columns[$0.slot]) = \(bind: $0.value)") }
        let sql: SQLFragment = "UPDATE \(identifier: mapping.table) SET \(SQLFragment.joined(sets, separator: ", "))\(condition)"
        let slots = values.map(\.slot)
        return try write(sql, returningKeys: returningKeys, layout: layout, author: author) { row in
            StoreHistoryChange(type: .update, entity: row.entity, primaryKey: row.key, changedSlots: slots)
        }
    }

    package func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let condition = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .sqlite).condition
        if request.entity.hasRelationshipsInHierarchy {
            return try deleteWithRules(request.entity, select: "SELECT Z_PK FROM \(identifier: mapping.table)\(condition)", layout: layout, author: author)
        }
        return try write("DELETE FROM \(identifier: mapping.table)\(condition)", returningKeys: returningKeys, layout: layout, author: author,
                         returningValues: true) { row in
            StoreHistoryChange(type: .delete, entity: row.entity, primaryKey: row.key, values: row.values)
        }
    }

    /// A row a batch statement touched, as `RETURNING` gives it back.
    struct ReturnedRow {
        var key: Int64
        var entity: EntityDescription
        var values: [ManagedValue]?
    }

    /// Runs a writing statement in a transaction; with `returningKeys` (or history to record) it
    /// adds `RETURNING Z_PK, Z_ENT` (and, for tombstones, every column) and collects the rows
    /// (without, a whole-table DELETE keeps SQLite's fast truncation).
    private func write(_ sql: SQLFragment, returningKeys: Bool, layout: RelationalLayout, author: HistoryAuthor,
                       returningValues: Bool = false, change: (ReturnedRow) -> StoreHistoryChange) throws -> BatchOutcome {
        let returning = returningKeys || tracksHistory
        let withValues = returningValues && tracksHistory
        return try writeTransaction { db in
            let clause: SQLFragment = withValues ? " RETURNING Z_PK, Z_ENT, *" : " RETURNING Z_PK, Z_ENT"
            let statement = try db.prepare(returning ? sql + clause : sql)
            defer { statement.finalize() }
            guard returning else {
                try statement.step()
                return BatchOutcome(count: db.changes, keys: nil)
            }
            var rows: [ReturnedRow] = []
            while try statement.step() {
                let entity = layout.entitiesByNumber[Int(statement.int64(at: 1))]
                guard let entity else { continue }
                // `*` repeats Z_PK, Z_ENT, Z_OPT before the table's columns.
                let values = withValues ? readValues(statement, from: 5, mapping: try layout.mapping(for: entity), layout: layout) : nil
                rows.append(ReturnedRow(key: statement.int64(at: 0), entity: entity, values: values))
            }
            try recordHistory(db, layout: layout, author: author, changes: rows.map(change))
            return BatchOutcome(count: rows.count, keys: rows.map(\.key))
        }
    }
}

extension SQLiteStore {
    /// A batch delete of rows with relationships, in one transaction: the rules are
    /// `BatchDeleteRules`'s, over this store's tables (`SQLiteDeleteRows`).
    fileprivate func deleteWithRules(_ entity: EntityDescription, select query: SQLFragment, layout: RelationalLayout, author: HistoryAuthor) throws -> BatchOutcome {
        try writeTransaction { db in
            let select = try db.prepare(query)
            defer { select.finalize() }
            var keys: [Int64] = []
            while try select.step() { keys.append(select.int64(at: 0)) }
            var rows = SQLiteDeleteRows(store: self, db: db, layout: layout)
            try BatchDeleteRules.delete(keys, of: entity.rootEntity, in: &rows)
            try recordHistory(db, layout: layout, author: author, changes: rows.history)
            return BatchOutcome(count: keys.count, keys: keys)
        }
    }
}

/// The rows of a batch delete with rules, in the SQLite store's tables, inside the caller's write
/// transaction. Keys go to SQLite in chunks of 500 bound parameters.
private struct SQLiteDeleteRows: BatchDeleteRows {
    let store: SQLiteStore
    let db: SQLiteConnection
    let layout: RelationalLayout
    /// The deletions to record in history (with tombstone values when history is kept).
    var history: [StoreHistoryChange] = []

    private static let chunk = 500

    /// Runs `statement(chunk)` once per chunk of `keys` (nothing when it answers `nil`); `row` is
    /// called for each result row.
    private func each(_ keys: [Int64], _ statement: ([Int64]) throws -> SQLFragment?, row: (SQLiteStatement) throws -> Void = { _ in }) throws {
        for start in stride(from: 0, to: keys.count, by: Self.chunk) {
            guard let fragment = try statement(Array(keys[start..<min(start + Self.chunk, keys.count)])) else { return }
            let prepared = try db.prepare(fragment)
            defer { prepared.finalize() }
            while try prepared.step() { try row(prepared) }
        }
    }

    private func column(_ keys: [Int64], _ statement: ([Int64]) throws -> SQLFragment?) throws -> [Int64] {
        var result: [Int64] = []
        try each(keys, statement) { if !$0.isNull(at: 0) { result.append($0.int64(at: 0)) } }
        return result
    }

    mutating func rows(_ keys: [Int64], of root: EntityDescription) throws -> [(entity: EntityDescription, keys: [Int64])] {
        var groups = KeysByEntity()
        var found: [StoreHistoryChange] = []
        let values = store.tracksHistory
        try each(keys, { try layout.deletedRowsQuery(root, withValues: values, keys: $0) }) { statement in
            guard let entity = layout.entitiesByNumber[Int(statement.int64(at: 0))] else { return }
            let key = statement.int64(at: 1)
            let tombstone = values ? store.readValues(statement, from: 2, mapping: try layout.mapping(for: entity), layout: layout) : nil
            found.append(StoreHistoryChange(type: .delete, entity: entity, primaryKey: key, values: tombstone))
            groups.append(key, of: entity)
        }
        history += found
        return groups.groups
    }

    mutating func destinations(of relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws -> [Int64] {
        try column(keys) { try layout.destinationKeysQuery(of: relationship, from: entity, keys: $0) }
    }

    mutating func detach(_ relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws {
        try each(keys) { try layout.detachStatement(relationship, keys: $0) }
    }

    mutating func remove(_ keys: [Int64], of root: EntityDescription) throws {
        try each(keys) { try layout.removeStatement(root, keys: $0) }
    }
}
