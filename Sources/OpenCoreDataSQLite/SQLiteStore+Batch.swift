import OpenCoreDataCore

extension SQLiteStore {
    package func batchInsert(entity: EntityDescription, rows: [[ManagedValue]], author: HistoryAuthor) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: entity)
        let rootNumber = try layout.mapping(for: entity.rootEntity).entityNumbers[0]
        // Rows colliding with the first uniqueness constraint update the row they collide with.
        let conflictColumns = entity.uniquenessConstraints.first?.compactMap { key in entity.slotByName[key].map { mapping.columns[$0] } } ?? []
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + mapping.columns
        var sql = "INSERT INTO \(mapping.table) (\(columns.joined(separator: ", "))) VALUES (?, ?, 1\(String(repeating: ", ?", count: mapping.columns.count)))"
        if !conflictColumns.isEmpty {
            let updates = mapping.columns.map { "\($0) = excluded.\($0)" } + ["Z_OPT = Z_OPT + 1"]
            // An upserted row keeps its key: read the keys back.
            sql += " ON CONFLICT (\(conflictColumns.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", ")) RETURNING Z_PK"
        }
        return try withWriter { db in
            try db.transaction {
                var next = try reserveKeys(db, root: entity.rootEntity, entityNumber: rootNumber, count: rows.count)
                let insert = try db.cachedStatement(sql)
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
                // An upserted row is an update in history (its key was not the one reserved).
                let reserved = next - Int64(rows.count)
                try recordHistory(db, layout: layout, author: author, changes: keys.enumerated().map { offset, key in
                    PendingChange(type: key == reserved + Int64(offset) ? .insert : .update, entity: entity, primaryKey: key)
                })
                return keys
            }
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let (condition, arguments) = try whereClause(request, mapping: mapping, layout: layout)
        let sets = ["Z_OPT = Z_OPT + 1"] + values.map { "\(mapping.columns[$0.slot]) = ?" }
        let sql = "UPDATE \(mapping.table) SET \(sets.joined(separator: ", "))\(condition)"
        let slots = values.map(\.slot)
        return try write(sql, arguments: values.map(\.value) + arguments, returningKeys: returningKeys, layout: layout, author: author) { row in
            PendingChange(type: .update, entity: row.entity, primaryKey: row.key, changedSlots: slots)
        }
    }

    package func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let (condition, arguments) = try whereClause(request, mapping: mapping, layout: layout)
        return try write("DELETE FROM \(mapping.table)\(condition)", arguments: arguments, returningKeys: returningKeys, layout: layout, author: author,
                         returningValues: true) { row in
            PendingChange(type: .delete, entity: row.entity, primaryKey: row.key, values: row.values)
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
    private func write(_ sql: String, arguments: [ManagedValue], returningKeys: Bool, layout: SQLiteLayout, author: HistoryAuthor,
                       returningValues: Bool = false, change: (ReturnedRow) -> PendingChange) throws -> BatchOutcome {
        let returning = returningKeys || tracksHistory
        let withValues = returningValues && tracksHistory
        return try withWriter { db in
            try db.transaction {
                let clause = " RETURNING Z_PK, Z_ENT" + (withValues ? ", *" : "")
                let statement = try db.prepare(returning ? sql + clause : sql)
                defer { statement.finalize() }
                try statement.bind(arguments)
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
}
