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
        return try writeTransaction { db in
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
            if tracksHistory {
                // An upserted row is an update in history (its key was not the one reserved).
                let reserved = next - Int64(rows.count)
                try recordHistory(db, layout: layout, author: author, changes: keys.enumerated().map { offset, key in
                    PendingChange(type: key == reserved + Int64(offset) ? .insert : .update, entity: entity, primaryKey: key)
                })
            }
            return keys
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
        if request.entity.hasRelationshipsInHierarchy {
            return try deleteWithRules(request.entity, sql: "SELECT Z_PK FROM \(mapping.table)\(condition)", arguments: arguments, layout: layout, author: author)
        }
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
        return try writeTransaction { db in
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

extension SQLiteStore {
    /// A batch delete of rows with relationships, in one transaction: deny rules refuse it
    /// (1600) while destinations exist; cascade deletes the destinations (recursively); nullify
    /// clears foreign keys pointing at the deleted rows; join-table rows go; no action leaves
    /// the destinations as they are.
    fileprivate func deleteWithRules(_ entity: EntityDescription, sql: String, arguments: [ManagedValue], layout: SQLiteLayout, author: HistoryAuthor) throws -> BatchOutcome {
        try writeTransaction { db in
            let select = try db.prepare(sql)
            defer { select.finalize() }
            try select.bind(arguments)
            var keys: [Int64] = []
            while try select.step() { keys.append(select.int64(at: 0)) }
            var history: [PendingChange] = []
            var seen: [ObjectIdentifier: Set<Int64>] = [:]
            try deleteRows(entity.rootEntity, keys: keys, db: db, layout: layout, history: &history, seen: &seen)
            try recordHistory(db, layout: layout, author: author, changes: history)
            return BatchOutcome(count: keys.count, keys: keys)
        }
    }

    private func deleteRows(_ root: EntityDescription, keys: [Int64], db: SQLiteConnection, layout: SQLiteLayout, history: inout [PendingChange], seen: inout [ObjectIdentifier: Set<Int64>]) throws {
        let rootMapping = try layout.mapping(for: root)
        // Rows already deleted (or being deleted) in this request are skipped: cascades can loop.
        let fresh = keys.filter { seen[ObjectIdentifier(root), default: []].insert($0).inserted }
        guard !fresh.isEmpty else { return }
        for chunk in stride(from: 0, to: fresh.count, by: 500).map({ Array(fresh[$0..<min($0 + 500, fresh.count)]) }) {
            let list = "(" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
            let bound = chunk.map { ManagedValue.integer($0) }
            // The rows, with their own entities (rules are per entity) and values (tombstones).
            let rows = try db.prepare("SELECT Z_ENT, * FROM \(rootMapping.table) WHERE Z_PK IN \(list)")
            defer { rows.finalize() }
            try rows.bind(bound)
            var byEntity: [ObjectIdentifier: (EntityDescription, [Int64])] = [:]
            while try rows.step() {
                guard let entity = layout.entitiesByNumber[Int(rows.int64(at: 0))] else { continue }
                let key = rows.int64(at: 1)
                byEntity[ObjectIdentifier(entity), default: (entity, [])].1.append(key)
                let values = tracksHistory ? readValues(rows, from: 4, mapping: try layout.mapping(for: entity), layout: layout) : nil
                history.append(PendingChange(type: .delete, entity: entity, primaryKey: key, values: values))
            }
            for (entity, entityKeys) in byEntity.values {
                try applyRules(entity, keys: entityKeys, db: db, layout: layout, history: &history, seen: &seen)
            }
            let delete = try db.prepare("DELETE FROM \(rootMapping.table) WHERE Z_PK IN \(list)")
            defer { delete.finalize() }
            try delete.bind(bound)
            try delete.step()
        }
    }

    private func applyRules(_ entity: EntityDescription, keys: [Int64], db: SQLiteConnection, layout: SQLiteLayout, history: inout [PendingChange], seen: inout [ObjectIdentifier: Set<Int64>]) throws {
        let mapping = try layout.mapping(for: entity)
        let list = "(" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
        let bound = keys.map { ManagedValue.integer($0) }
        func column(_ sql: String) throws -> [Int64] {
            let statement = try db.prepare(sql)
            defer { statement.finalize() }
            try statement.bind(bound)
            var result: [Int64] = []
            while try statement.step() { if !statement.isNull(at: 0) { result.append(statement.int64(at: 0)) } }
            return result
        }
        func run(_ sql: String) throws {
            let statement = try db.prepare(sql)
            defer { statement.finalize() }
            try statement.bind(bound)
            try statement.step()
        }
        for relationship in entity.toOneRelationships + entity.toManyRelationships where relationship.deleteRule != .noAction {
            guard let destination = relationship.destinationEntity else { continue }
            let destinationTable = try layout.mapping(for: destination).table
            // The destinations of the deleted rows, and how to detach them.
            let destinations: [Int64]
            var detach: String?
            if !relationship.isToMany {
                guard let slot = entity.toOneSlotByName[relationship.name] else { continue }
                destinations = try column("SELECT \(mapping.columns[slot]) FROM \(mapping.table) WHERE Z_PK IN \(list)")
                if let inverse = relationship.inverseRelationship, !inverse.isToMany, let inverseSlot = destination.toOneSlotByName[inverse.name] {
                    let inverseColumn = try layout.mapping(for: destination).columns[inverseSlot]
                    detach = "UPDATE \(destinationTable) SET \(inverseColumn) = NULL, Z_OPT = Z_OPT + 1 WHERE \(inverseColumn) IN \(list)"
                }
            } else {
                switch try layout.storage(of: relationship) {
                case .inverseForeignKey(let table, let fk, let order, _):
                    destinations = try column("SELECT Z_PK FROM \(table) WHERE \(fk) IN \(list)")
                    detach = "UPDATE \(table) SET \(fk) = NULL\(order.map { ", \($0) = NULL" } ?? ""), Z_OPT = Z_OPT + 1 WHERE \(fk) IN \(list)"
                case .joinTable(let table, let own, let other, _, _):
                    destinations = try column("SELECT \(other) FROM \(table) WHERE \(own) IN \(list)")
                    detach = "DELETE FROM \(table) WHERE \(own) IN \(list)"
                }
            }
            if relationship.deleteRule == .deny, !destinations.isEmpty {
                throw CoreDataError.batchDeleteDenied(entity, relationship, holding: destinations.count)
            }
            if let detach { try run(detach) }
            if relationship.deleteRule == .cascade {
                try deleteRows(destination.rootEntity, keys: destinations, db: db, layout: layout, history: &history, seen: &seen)
            }
        }
    }
}
