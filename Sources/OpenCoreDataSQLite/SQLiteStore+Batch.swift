import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    package func batchInsert(entity: EntityDescription, rows: StoredRows, author: HistoryAuthor) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: entity)
        let rootNumber = try layout.mapping(for: entity.rootEntity).entityNumbers[0]
        // Rows colliding with the first uniqueness constraint update the row they collide with.
        let conflictSlots = entity.upsertConstraint?.properties.compactMap { entity.slotByName[$0] } ?? []
        let colliding = conflictSlots.isEmpty ? nil : CollidingRowUpdate(mapping: mapping, conflictSlots: conflictSlots)
        var sql = RelationalLayout.insertStatement(mapping.table, columns: mapping.columns)
        if let colliding {
            // Not `DO UPDATE … RETURNING`: SQLite collects a RETURNING statement's rows in a
            // temporary table of its own, opened and dropped at every row (three times the work
            // of the insert). A row that collides is inserted as nothing, and updated by key.
            sql += " ON CONFLICT (\(SQLFragment.identifiers(colliding.conflictColumns))) DO NOTHING"
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
                try insert.run()
                if let colliding, db.changes == 0 {
                    keys.append(try colliding.update(values, in: db))
                } else {
                    keys.append(next)
                }
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

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool,
                             author: HistoryAuthor) throws -> BatchOutcome {
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
            let select: SQLFragment = "SELECT Z_PK FROM \(identifier: mapping.table)\(condition)"
            return try deleteWithRules(request.entity, select: select, layout: layout, author: author)
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
    /// `BatchDeleteRules`'s, over this store's tables (`RelationalDeleteRows`; keys go to SQLite
    /// 500 bound values a statement).
    fileprivate func deleteWithRules(_ entity: EntityDescription, select query: SQLFragment, layout: RelationalLayout,
                                     author: HistoryAuthor) throws -> BatchOutcome {
        try writeTransaction { db in
            let select = try db.prepare(query)
            defer { select.finalize() }
            var keys: [Int64] = []
            while try select.step() { keys.append(select.int64(at: 0)) }
            var rows = RelationalDeleteRows(session: db, layout: layout, readsTombstones: tracksHistory, chunk: 500) { row, mapping in
                self.readValues(row, from: 2, mapping: mapping, layout: layout)
            }
            try BatchDeleteRules.delete(keys, of: entity.rootEntity, in: &rows)
            try recordHistory(db, layout: layout, author: author, changes: rows.history)
            return BatchOutcome(count: keys.count, keys: keys)
        }
    }
}

/// How a batch insert's row that collided with the uniqueness constraint on `conflictSlots`
/// updates the row it collided with, as `ON CONFLICT … DO UPDATE` would: every column, `Z_OPT`
/// bumped, its key and entity kept. Both statements are written once per request.
private struct CollidingRowUpdate {
    let conflictSlots: [Int]
    let table: String
    let conflictColumns: [String]
    /// `SELECT Z_PK … WHERE <each constraint column> = ?`: the colliding values are never nil (nil
    /// never collides), so `=` finds what the unique index found, under the same (binary) collation.
    let find: String
    /// `UPDATE … SET Z_OPT = Z_OPT + 1, <every column> = ? WHERE Z_PK = ?`.
    let update: String

    init(mapping: RelationalLayout.EntityMapping, conflictSlots: [Int]) {
        self.conflictSlots = conflictSlots
        table = mapping.table
        conflictColumns = conflictSlots.map { mapping.columns[$0] }
        let conditions = conflictColumns.map { SQLFragment("\(identifier: $0) = \(parameters: 1)") }
        find = SQLFragment("SELECT Z_PK FROM \(identifier: mapping.table) WHERE \(SQLFragment.joined(conditions, separator: " AND "))")
            .rendered(for: .sqlite).sql
        let sets = ["Z_OPT = Z_OPT + 1"] + mapping.columns.map { SQLFragment("\(identifier: $0) = \(parameters: 1)") }
        update = SQLFragment("UPDATE \(identifier: mapping.table) SET \(SQLFragment.joined(sets, separator: ", ")) WHERE Z_PK = \(parameters: 1)")
            .rendered(for: .sqlite).sql
    }

    /// Updates the row `values` collided with; returns its key.
    func update(_ values: ArraySlice<ManagedValue>, in db: SQLiteConnection) throws -> Int64 {
        let select = try db.cachedStatement(find)
        for (offset, slot) in conflictSlots.enumerated() { try select.bind(values[values.startIndex + slot], at: Int32(offset + 1)) }
        let found = try select.step()
        let key = found ? select.int64(at: 0) : 0
        select.reset()
        guard found else {
            throw CoreDataError(.persistentStoreSave, """
                A row of the batch insert into \(table) collided with the uniqueness constraint of \
                \(conflictColumns.joined(separator: ", ")) but no row has those values; nothing was written.
                """)
        }
        let statement = try db.cachedStatement(update)
        try statement.bind(values)
        statement.bind(key, at: Int32(values.count + 1))
        try statement.run()
        return key
    }
}
