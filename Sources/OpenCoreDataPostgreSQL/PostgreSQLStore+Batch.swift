import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    package func batchInsert(entity: EntityDescription, rows: StoredRows, author: HistoryAuthor) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: entity)
        // Rows colliding with the first uniqueness constraint update the row they collide with,
        // which keeps its key (read back).
        let conflictColumns = entity.upsertConstraint?.properties.compactMap { key in entity.slotByName[key].map { mapping.columns[$0] } } ?? []
        // A row's statement: the shared insert's text, its key, entity number and values bound in order.
        var statement = RelationalLayout.insertStatement(mapping.table, columns: mapping.columns)
        if !conflictColumns.isEmpty {
            let updates = mapping.columns.map { SQLFragment("\(identifier: $0) = EXCLUDED.\(identifier: $0)") }
                + ["Z_OPT = \(identifier: mapping.table).Z_OPT + 1"]
            statement += " ON CONFLICT (\(SQLFragment.identifiers(conflictColumns))) DO UPDATE SET \(SQLFragment.joined(updates, separator: ", "))"
        }
        statement += " RETURNING Z_PK"
        guard !rows.isEmpty else { return [] }
        var next = try allocatePrimaryKeys(root: entity.rootEntity, count: rows.count)
        let entityNumber = Int64(mapping.entityNumbers[0])
        if conflictColumns.isEmpty {
            // Nothing to match: multi-row statements, every row under its reserved key.
            let keys = Array(next..<(next + Int64(rows.count)))
            return try batchTransaction { session in
                try Self.insertRows(session, into: mapping.table, columns: mapping.columns, entityNumber: entityNumber,
                                    rows: zip(keys, rows).map { ($0, Self.columnValues(Array($1))) })
                try recordHistory(session, layout: layout, author: author,
                                  changes: keys.map { StoreHistoryChange(type: .insert, entity: entity, primaryKey: $0) })
                return keys
            }
        }
        // A statement per row: a row may collide with one inserted before it in the same request.
        return try batchTransaction { session in
            var keys: [Int64] = []
            var changes: [StoreHistoryChange] = []
            keys.reserveCapacity(rows.count)
            for values in rows {
                let returned = try session.execute(statement, parameters: [.integer(next), .integer(entityNumber)] + Array(values)).rows
                let key = if case .integer(let key)? = returned.first?.first { key } else { next }
                keys.append(key)
                // An upserted row is an update in history (its key was not the one reserved).
                changes.append(StoreHistoryChange(type: key == next ? .insert : .update, entity: entity, primaryKey: key))
                next += 1
            }
            try recordHistory(session, layout: layout, author: author, changes: changes)
            return keys
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool,
                             author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let sets = ["Z_OPT = Z_OPT + 1"] + values.map { SQLFragment("\(identifier: mapping.columns[$0.slot]) = \(bind: $0.value)") }
        let update: SQLFragment = "UPDATE \(identifier: mapping.table) SET \(SQLFragment.joined(sets, separator: ", "))"
        let query = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .postgreSQL)
        let slots = values.map(\.slot)
        let rows = try batchTransaction { session in
            // String operators are tested in Swift: the rows that match, locked, then those rows by key.
            let matching = query.isExact ? nil : try lockedKeys(request, mapping: mapping, layout: layout, session: session)
            let rows = if let matching {
                try Self.eachChunk(of: matching) { keys in
                    try session.execute(update + " WHERE Z_PK IN (\(list: keys.map { .integer($0) })) RETURNING Z_PK, Z_ENT").rows
                }.flatMap { $0 }
            } else {
                try session.execute(update + query.condition + " RETURNING Z_PK, Z_ENT").rows
            }
            let changes = rows.compactMap { row -> StoreHistoryChange? in
                guard case .integer(let key) = row[0], case .integer(let number) = row[1], let entity = layout.entitiesByNumber[Int(number)] else {
                    return nil
                }
                return StoreHistoryChange(type: .update, entity: entity, primaryKey: key, changedSlots: slots)
            }
            try recordHistory(session, layout: layout, author: author, changes: changes)
            return changes
        }
        return BatchOutcome(count: rows.count, keys: returningKeys ? rows.map(\.primaryKey) : nil)
    }

    package func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let query = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .postgreSQL)
        let (condition, exact) = (query.condition, query.isExact)
        if exact, !request.entity.hasRelationshipsInHierarchy, !tracksHistory {
            let keys = try batchTransaction { session in
                try session.integers("DELETE FROM \(identifier: mapping.table)\(condition) RETURNING Z_PK")
            }
            return BatchOutcome(count: keys.count, keys: returningKeys ? keys : nil)
        }
        // Row by row through the rules (which also read what history keeps of each row).
        let keys = try batchTransaction { session in
            let keys = try exact
                ? session.integers("SELECT Z_PK FROM \(identifier: mapping.table)\(condition) ORDER BY Z_PK FOR UPDATE")
                : lockedKeys(request, mapping: mapping, layout: layout, session: session)
            var rows = RelationalDeleteRows(session: session, layout: layout, readsTombstones: tracksHistory, chunk: 1000) { row, mapping in
                self.values(of: row.values, from: 2, mapping: mapping, layout: layout)
            }
            try BatchDeleteRules.delete(keys, of: request.entity.rootEntity, in: &rows)
            try recordHistory(session, layout: layout, author: author, changes: rows.history)
            return keys
        }
        return BatchOutcome(count: keys.count, keys: returningKeys ? keys : nil)
    }

    /// The keys of the rows a batch update or delete with string operators changes, chosen inside
    /// its transaction: the superset SQL selects, locked (`FOR UPDATE`, in key order) so that no
    /// writer changes them before the batch does, then tested in Swift on the values read under
    /// the lock. (Chosen before the transaction, a row renamed in between from "Draft 1" to
    /// "Final 1" was deleted by a batch deleting drafts.) Under `READ COMMITTED` a row locked after
    /// waiting for another writer is read as that writer left it.
    private func lockedKeys(_ request: StoreFetchRequest, mapping: RelationalLayout.EntityMapping, layout: RelationalLayout,
                            session: PostgreSQLSession) throws -> [Int64] {
        let condition = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .postgreSQL).condition
        let cells = try session.execute("""
            SELECT \(FetchQuery.rowColumns(mapping)) FROM \(identifier: mapping.table)\(condition) ORDER BY Z_PK FOR UPDATE
            """).rows
        return try finishInSwift(try storeRows(cells, request: request, mapping: mapping, layout: layout), request).map(\.primaryKey)
    }

    /// Calls `body` once per chunk of up to 1,000 of `keys`.
    static func eachChunk<T>(of keys: [Int64], _ body: ([Int64]) throws -> T) throws -> [T] {
        var results: [T] = []
        for start in stride(from: 0, to: keys.count, by: 1000) {
            results.append(try body(Array(keys[start..<min(start + 1000, keys.count)])))
        }
        return results
    }
}
