import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    package func batchInsert(entity: EntityDescription, rows: [[ManagedValue]], author: HistoryAuthor) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: entity)
        // Rows colliding with the first uniqueness constraint update the row they collide with,
        // which keeps its key (read back).
        let conflictColumns = entity.upsertConstraint?.properties.compactMap { key in entity.slotByName[key].map { mapping.columns[$0] } } ?? []
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + mapping.columns
        var sql = "INSERT INTO \(mapping.table) (\(columns.joined(separator: ", "))) VALUES ($1, $2, 1\(mapping.columns.isEmpty ? "" : ", " + SQLDialect.postgreSQL.placeholders(from: 3, count: mapping.columns.count)))"
        if !conflictColumns.isEmpty {
            let updates = mapping.columns.map { "\($0) = EXCLUDED.\($0)" } + ["Z_OPT = \(mapping.table).Z_OPT + 1"]
            sql += " ON CONFLICT (\(conflictColumns.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        sql += " RETURNING Z_PK"
        guard !rows.isEmpty else { return [] }
        var next = try allocatePrimaryKeys(root: entity.rootEntity, count: rows.count)
        let entityNumber = Int64(mapping.entityNumbers[0])
        if conflictColumns.isEmpty {
            // Nothing to match: multi-row statements, every row under its reserved key.
            let keys = Array(next..<(next + Int64(rows.count)))
            return try batchTransaction { session in
                try Self.insertRows(session, into: mapping.table, columns: mapping.columns, entityNumber: entityNumber,
                                    rows: zip(keys, rows).map { ($0, Self.columnValues($1)) })
                try recordHistory(session, layout: layout, author: author, changes: keys.map { StoreHistoryChange(type: .insert, entity: entity, primaryKey: $0) })
                return keys
            }
        }
        // A statement per row: a row may collide with one inserted before it in the same request.
        return try batchTransaction { session in
            var keys: [Int64] = []
            var changes: [StoreHistoryChange] = []
            keys.reserveCapacity(rows.count)
            for values in rows {
                let returned = try session.execute(sql, [.integer(next), .integer(entityNumber)] + Self.columnValues(values)).rows
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

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        var arguments = Self.columnValues(values.map(\.value))
        let sets = ["Z_OPT = Z_OPT + 1"] + values.enumerated().map { "\(mapping.columns[$1.slot]) = $\($0 + 1)" }
        let update = "UPDATE \(mapping.table) SET \(sets.joined(separator: ", "))"
        let (condition, exact) = try whereClause(request, mapping: mapping, layout: layout, arguments: &arguments)
        let slots = values.map(\.slot)
        let rows = try batchTransaction { session in
            // String operators are tested in Swift: the rows that match, locked, then those rows by key.
            let matching = exact ? nil : try lockedKeys(request, mapping: mapping, layout: layout, session: session)
            let rows = if let matching {
                try Self.eachChunk(of: matching, after: values.count) { list, keyArguments in
                    try session.execute(update + " WHERE Z_PK IN (\(list)) RETURNING Z_PK, Z_ENT", Self.columnValues(values.map(\.value)) + keyArguments).rows
                }.flatMap { $0 }
            } else {
                try session.execute(update + condition + " RETURNING Z_PK, Z_ENT", arguments).rows
            }
            let changes = rows.compactMap { row -> StoreHistoryChange? in
                guard case .integer(let key) = row[0], case .integer(let number) = row[1], let entity = layout.entitiesByNumber[Int(number)] else { return nil }
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
        var arguments: [ManagedValue] = []
        let (condition, exact) = try whereClause(request, mapping: mapping, layout: layout, arguments: &arguments)
        if exact, !request.entity.hasRelationshipsInHierarchy, !tracksHistory {
            let keys = try batchTransaction { session in
                try session.integers("DELETE FROM \(mapping.table)\(condition) RETURNING Z_PK", arguments)
            }
            return BatchOutcome(count: keys.count, keys: returningKeys ? keys : nil)
        }
        // Row by row through the rules (which also read what history keeps of each row).
        let keys = try batchTransaction { session in
            let keys = try exact
                ? session.integers("SELECT Z_PK FROM \(mapping.table)\(condition) ORDER BY Z_PK FOR UPDATE", arguments)
                : lockedKeys(request, mapping: mapping, layout: layout, session: session)
            var rows = PostgreSQLDeleteRows(store: self, session: session, layout: layout)
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
        var arguments: [ManagedValue] = []
        let (condition, _) = try whereClause(request, mapping: mapping, layout: layout, arguments: &arguments)
        let cells = try session.execute("SELECT \(Self.rowColumns(mapping)) FROM \(mapping.table)\(condition) ORDER BY Z_PK FOR UPDATE", arguments).rows
        return try finishInSwift(try storeRows(cells, request: request, mapping: mapping, layout: layout), request).map(\.primaryKey)
    }

    /// Calls `body` once per chunk of `keys` with the chunk's placeholder list (numbered after
    /// `offset` values bound before it) and the chunk as values.
    static func eachChunk<T>(of keys: [Int64], after offset: Int = 0, _ body: (String, [ManagedValue]) throws -> T) throws -> [T] {
        var results: [T] = []
        for start in stride(from: 0, to: keys.count, by: 1000) {
            let chunk = keys[start..<min(start + 1000, keys.count)]
            results.append(try body(SQLDialect.postgreSQL.placeholders(from: offset + 1, count: chunk.count), chunk.map { .integer($0) }))
        }
        return results
    }
}

/// The rows of a batch delete with rules, in the PostgreSQL store's tables, inside the caller's
/// transaction.
private struct PostgreSQLDeleteRows: BatchDeleteRows {
    let store: PostgreSQLStore
    let session: PostgreSQLSession
    let layout: RelationalLayout
    /// The deletions to record in history (with tombstone values when history is kept).
    var history: [StoreHistoryChange] = []

    /// The first column of every row `sql(list)` selects, chunk by chunk (none when it answers `nil`).
    private func column(_ keys: [Int64], _ sql: (String) throws -> String?) throws -> [Int64] {
        try PostgreSQLStore.eachChunk(of: keys) { list, arguments -> [Int64] in
            guard let sql = try sql(list) else { return [] }
            return try session.integers(sql, arguments)
        }.flatMap { $0 }
    }

    private func run(_ keys: [Int64], _ sql: (String) throws -> String?) throws {
        _ = try PostgreSQLStore.eachChunk(of: keys) { list, arguments in
            if let sql = try sql(list) { try session.execute(sql, arguments) }
        }
    }

    mutating func rows(_ keys: [Int64], of root: EntityDescription) throws -> [(entity: EntityDescription, keys: [Int64])] {
        var groups = KeysByEntity()
        for chunkRows in try PostgreSQLStore.eachChunk(of: keys, { list, arguments in
            try session.execute(try layout.deletedRowsQuery(root, withValues: store.tracksHistory, list: list), arguments).rows
        }) {
            for row in chunkRows {
                guard case .integer(let number) = row[0], case .integer(let key) = row[1], let entity = layout.entitiesByNumber[Int(number)] else { continue }
                let tombstone = store.tracksHistory ? store.values(of: row, from: 2, mapping: try layout.mapping(for: entity), layout: layout) : nil
                history.append(StoreHistoryChange(type: .delete, entity: entity, primaryKey: key, values: tombstone))
                groups.append(key, of: entity)
            }
        }
        return groups.groups
    }

    mutating func destinations(of relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws -> [Int64] {
        try column(keys) { try layout.destinationKeysQuery(of: relationship, from: entity, list: $0) }
    }

    mutating func detach(_ relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) throws {
        try run(keys) { try layout.detachStatement(relationship, list: $0) }
    }

    mutating func remove(_ keys: [Int64], of root: EntityDescription) throws {
        try run(keys) { try layout.removeStatement(root, list: $0) }
    }
}
