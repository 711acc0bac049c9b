import OpenCoreDataCore

extension SQLiteStore {
    package func batchInsert(entity: EntityDescription, rows: [[ManagedValue]]) throws -> [Int64] {
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
                return keys
            }
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool) throws -> BatchOutcome {
        let mapping = try currentLayout().mapping(for: request.entity)
        let (condition, arguments) = try whereClause(request, mapping: mapping)
        let sets = ["Z_OPT = Z_OPT + 1"] + values.map { "\(mapping.columns[$0.slot]) = ?" }
        let sql = "UPDATE \(mapping.table) SET \(sets.joined(separator: ", "))\(condition)"
        return try write(sql, arguments: values.map(\.value) + arguments, returningKeys: returningKeys)
    }

    package func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool) throws -> BatchOutcome {
        let mapping = try currentLayout().mapping(for: request.entity)
        let (condition, arguments) = try whereClause(request, mapping: mapping)
        return try write("DELETE FROM \(mapping.table)\(condition)", arguments: arguments, returningKeys: returningKeys)
    }

    /// Runs a writing statement in a transaction; with `returningKeys` it adds `RETURNING Z_PK`
    /// and collects the keys (without, a whole-table DELETE keeps SQLite's fast truncation).
    private func write(_ sql: String, arguments: [ManagedValue], returningKeys: Bool) throws -> BatchOutcome {
        try withWriter { db in
            try db.transaction {
                let statement = try db.prepare(returningKeys ? sql + " RETURNING Z_PK" : sql)
                defer { statement.finalize() }
                try statement.bind(arguments)
                guard returningKeys else {
                    try statement.step()
                    return BatchOutcome(count: db.changes, keys: nil)
                }
                var keys: [Int64] = []
                while try statement.step() { keys.append(statement.int64(at: 0)) }
                return BatchOutcome(count: keys.count, keys: keys)
            }
        }
    }
}
