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
            sql += " ON CONFLICT (\(conflictColumns.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        sql += " RETURNING Z_PK"
        return try withWriter { db in
            try db.transaction {
                let allocate = try db.cachedStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ?")
                try allocate.bind([.integer(Int64(rows.count)), .integer(Int64(rootNumber))])
                try allocate.run()
                let select = try db.cachedStatement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
                try select.bind([.integer(Int64(rootNumber))])
                guard try select.step() else {
                    select.reset()
                    throw CoreDataError(.persistentStoreOperation, "The store's Z_PRIMARYKEY table has no row for \(entity.rootEntity.name).")
                }
                var next = select.int64(at: 0) - Int64(rows.count) + 1
                select.reset()
                let insert = try db.cachedStatement(sql)
                let entityNumber = Int64(mapping.entityNumbers[0])
                var keys: [Int64] = []
                keys.reserveCapacity(rows.count)
                for values in rows {
                    insert.bind(next, at: 1)
                    insert.bind(entityNumber, at: 2)
                    try insert.bind(values, from: 3)
                    if try insert.step() { keys.append(insert.int64(at: 0)) }
                    insert.reset()
                    next += 1
                }
                return keys
            }
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)]) throws -> [Int64] {
        let mapping = try currentLayout().mapping(for: request.entity)
        let (condition, arguments) = whereClause(request, mapping: mapping)
        let sets = ["Z_OPT = Z_OPT + 1"] + values.map { "\(mapping.columns[$0.slot]) = ?" }
        let sql = "UPDATE \(mapping.table) SET \(sets.joined(separator: ", "))\(condition) RETURNING Z_PK"
        return try returningKeys(sql, arguments: values.map(\.value) + arguments)
    }

    package func batchDelete(_ request: StoreFetchRequest) throws -> [Int64] {
        let mapping = try currentLayout().mapping(for: request.entity)
        let (condition, arguments) = whereClause(request, mapping: mapping)
        return try returningKeys("DELETE FROM \(mapping.table)\(condition) RETURNING Z_PK", arguments: arguments)
    }

    /// Runs a writing statement with `RETURNING Z_PK` in a transaction and collects the keys.
    private func returningKeys(_ sql: String, arguments: [ManagedValue]) throws -> [Int64] {
        try withWriter { db in
            try db.transaction {
                let statement = try db.prepare(sql)
                defer { statement.finalize() }
                try statement.bind(arguments)
                var keys: [Int64] = []
                while try statement.step() { keys.append(statement.int64(at: 0)) }
                return keys
            }
        }
    }
}
