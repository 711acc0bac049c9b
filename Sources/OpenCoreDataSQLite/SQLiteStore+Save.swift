import OpenCoreDataCore

extension SQLiteStore {
    package func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64 {
        let number = try currentLayout().mapping(for: root).entityNumbers[0]
        return try writeTransaction { db in
            try reserveKeys(db, root: root, entityNumber: number, count: count)
        }
    }

    /// Raises `Z_PRIMARYKEY.Z_MAX` of a root entity by `count` (inside the caller's transaction)
    /// and returns the first reserved key.
    func reserveKeys(_ db: SQLiteConnection, root: EntityDescription, entityNumber number: Int, count: Int) throws -> Int64 {
        try reserveKeys(db, entityNumber: number, count: count, name: root.name)
    }

    /// The same for any `Z_PRIMARYKEY` row (history entities included).
    func reserveKeys(_ db: SQLiteConnection, entityNumber number: Int, count: Int, name: String? = nil) throws -> Int64 {
        let update = try db.cachedStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ?")
        try update.bind([.integer(Int64(count)), .integer(Int64(number))])
        try update.run()
        let select = try db.cachedStatement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
        defer { select.reset() }
        try select.bind([.integer(Int64(number))])
        guard try select.step() else {
            throw CoreDataError(.persistentStoreOperation, "The store's Z_PRIMARYKEY table has no row for the entity \(name ?? "?") (Z_ENT \(number)).")
        }
        return select.int64(at: 0) - Int64(count) + 1
    }

    package func save(_ request: StoreSaveRequest, beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome {
        let layout = try currentLayout()
        return try withWriter { db in
            try db.execute("BEGIN IMMEDIATE")
            do {
                try checkModelUnchanged(db)
                var conflicts: [StoreConflict] = []
                // One statement per entity and set of changed columns (usually one per save); the
                // previous update's is tried first, without hashing, and values are bound in place.
                var updateStatements: [UpdateShape: SQLiteStatement] = [:]
                var previous: (entity: ObjectIdentifier, slots: [Int], statement: SQLiteStatement, mapping: SQLiteLayout.EntityMapping)?
                for update in request.updates {
                    let statement: SQLiteStatement, mapping: SQLiteLayout.EntityMapping
                    if let previous, previous.entity == ObjectIdentifier(update.entity), previous.slots == update.slots {
                        (statement, mapping) = (previous.statement, previous.mapping)
                    } else {
                        mapping = try layout.mapping(for: update.entity)
                        let shape = UpdateShape(entity: ObjectIdentifier(update.entity), slots: update.slots)
                        if let cached = updateStatements[shape] {
                            statement = cached
                        } else {
                            let sets = update.slots.map { "\(mapping.columns[$0]) = ?" }
                                + update.slots.compactMap { mapping.entityColumns[$0].map { "\($0.name) = ?" } }
                            statement = try db.cachedStatement("UPDATE \(mapping.table) SET " + (["Z_OPT = ?"] + sets).joined(separator: ", ") + " WHERE Z_PK = ? AND Z_OPT = ?")
                            updateStatements[shape] = statement
                        }
                        previous = (shape.entity, update.slots, statement, mapping)
                    }
                    // Z_OPT, the changed columns, the Z_ENT of changed to-ones into hierarchies,
                    // then the key and the expected version.
                    var index: Int32 = 1
                    statement.bind(update.expectedVersion + 1, at: index)
                    for slot in update.slots {
                        index += 1
                        try statement.bind(update.values[slot], at: index)
                    }
                    for slot in update.slots where mapping.entityColumns[slot] != nil {
                        index += 1
                        if case .object(let id) = update.values[slot] {
                            statement.bind(Int64(layout.entityNumber(of: id.entity)), at: index)
                        } else {
                            try statement.bind(.null, at: index)
                        }
                    }
                    statement.bind(update.primaryKey, at: index + 1)
                    statement.bind(update.expectedVersion, at: index + 2)
                    try statement.run()
                    if db.changes == 0 {
                        conflicts.append(StoreConflict(entity: update.entity, primaryKey: update.primaryKey, expectedVersion: update.expectedVersion,
                                                       current: try currentRow(db, mapping: mapping, layout: layout, primaryKey: update.primaryKey)))
                    }
                }
                // A row already deleted elsewhere is not a conflict, nor recorded again in history.
                var removed: [StoreSaveRequest.Delete] = []
                for delete in request.deletes {
                    let mapping = try layout.mapping(for: delete.entity)
                    let statement = try db.cachedStatement("DELETE FROM \(mapping.table) WHERE Z_PK = ? AND Z_OPT = ?")
                    statement.bind(delete.primaryKey, at: 1)
                    statement.bind(delete.expectedVersion, at: 2)
                    try statement.run()
                    if db.changes > 0 {
                        removed.append(delete)
                    } else if let current = try currentRow(db, mapping: mapping, layout: layout, primaryKey: delete.primaryKey) {
                        conflicts.append(StoreConflict(entity: delete.entity, primaryKey: delete.primaryKey, expectedVersion: delete.expectedVersion, current: current))
                    }
                }
                if !conflicts.isEmpty {
                    try db.execute("ROLLBACK")
                    return .conflicts(conflicts)
                }
                try insert(request.inserts, db: db, layout: layout)
                try writeJoins(request.joins, db: db, layout: layout)
                try writeOrders(request.orders, db: db, layout: layout)
                if tracksHistory {
                    let changes = request.inserts.map { PendingChange(type: .insert, entity: $0.entity, primaryKey: $0.primaryKey) }
                        + request.updates.map { PendingChange(type: .update, entity: $0.entity, primaryKey: $0.primaryKey, changedSlots: $0.changedSlots) }
                        + removed.map { PendingChange(type: .delete, entity: $0.entity, primaryKey: $0.primaryKey, values: $0.values) }
                    try recordHistory(db, layout: layout, author: request.author, changes: changes)
                }
                if let beforeCommit, try !beforeCommit() {
                    try db.execute("ROLLBACK")
                    return .withdrawn
                }
                try db.execute("COMMIT")
                return .committed
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    private struct UpdateShape: Hashable {
        var entity: ObjectIdentifier
        var slots: [Int]
    }

    private func insert(_ inserts: [StoreSaveRequest.Insert], db: SQLiteConnection, layout: SQLiteLayout) throws {
        var statements: [ObjectIdentifier: (SQLiteStatement, Int64, SQLiteLayout.EntityMapping)] = [:]
        for insert in inserts {
            let key = ObjectIdentifier(insert.entity)
            let (statement, entityNumber, mapping): (SQLiteStatement, Int64, SQLiteLayout.EntityMapping)
            if let cached = statements[key] {
                (statement, entityNumber, mapping) = cached
            } else {
                mapping = try layout.mapping(for: insert.entity)
                let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + mapping.insertColumns
                let sql = "INSERT INTO \(mapping.table) (\(columns.joined(separator: ", "))) VALUES (?, ?, 1\(String(repeating: ", ?", count: mapping.insertColumns.count)))"
                (statement, entityNumber) = (try db.cachedStatement(sql), Int64(mapping.entityNumbers[0]))
                statements[key] = (statement, entityNumber, mapping)
            }
            statement.bind(insert.primaryKey, at: 1)
            statement.bind(entityNumber, at: 2)
            try statement.bind(insertValues(insert.values, mapping: mapping, layout: layout), from: 3)
            try statement.run()
        }
    }

    /// Adds and removes many-to-many rows in join tables (idempotent: both sides of a pair
    /// may report the same change).
    private func writeJoins(_ joins: [StoreSaveRequest.JoinChange], db: SQLiteConnection, layout: SQLiteLayout) throws {
        for join in joins {
            guard case .joinTable(let table, let ownColumn, let otherColumn, _, _) = try layout.storage(of: join.relationship) else { continue }
            let sql = join.isInsert
                ? "INSERT OR IGNORE INTO \(table) (\(ownColumn), \(otherColumn)) VALUES (?, ?)"
                : "DELETE FROM \(table) WHERE \(ownColumn) = ? AND \(otherColumn) = ?"
            let statement = try db.cachedStatement(sql)
            try statement.bind([.integer(join.source), .integer(join.destination)])
            try statement.run()
        }
    }

    /// Writes the positions of the members of ordered relationships (after inserts and joins,
    /// so that new members' rows exist).
    private func writeOrders(_ orders: [StoreSaveRequest.OrderChange], db: SQLiteConnection, layout: SQLiteLayout) throws {
        for change in orders {
            let storage = try layout.storage(of: change.relationship)
            guard let orderColumn = storage.orderColumn else { continue }
            let sql: String
            switch storage {
            case .inverseForeignKey(let table, let column, _, _):
                sql = "UPDATE \(table) SET \(orderColumn) = ? WHERE Z_PK = ? AND \(column) = ?"
            case .joinTable(let table, let ownColumn, let otherColumn, _, _):
                sql = "UPDATE \(table) SET \(orderColumn) = ? WHERE \(otherColumn) = ? AND \(ownColumn) = ?"
            }
            let statement = try db.cachedStatement(sql)
            for (index, member) in change.members.enumerated() {
                try statement.bind([.integer(SQLiteLayout.orderValue(index)), .integer(member), .integer(change.source)])
                try statement.run()
            }
        }
    }

    /// The row as the writer sees it inside the transaction, or `nil` when it is gone.
    private func currentRow(_ db: SQLiteConnection, mapping: SQLiteLayout.EntityMapping, layout: SQLiteLayout, primaryKey: Int64) throws -> RowSnapshot? {
        let sql = "SELECT Z_OPT" + mapping.tableColumns.map { ", " + $0 }.joined() + " FROM \(mapping.table) WHERE Z_PK = ?"
        let statement = try db.cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind([.integer(primaryKey)])
        guard try statement.step() else { return nil }
        return RowSnapshot(values: readValues(statement, from: 1, mapping: mapping, layout: layout), version: statement.int64(at: 0))
    }
}
