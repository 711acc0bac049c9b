import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    package func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64 {
        let number = try currentLayout().mapping(for: root).entityNumbers[0]
        return try writeTransaction { db in
            try reserveKeys(db, root: root, entityNumber: number, count: count)
        }
    }

    package func lastPrimaryKey(root: EntityDescription) throws -> Int64 {
        let number = try currentLayout().mapping(for: root).entityNumbers[0]
        return try readers.read { db in
            let statement = try db.cachedStatement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
            defer { statement.reset() }
            try statement.bind([.integer(Int64(number))])
            return try statement.step() && !statement.isNull(at: 0) ? statement.int64(at: 0) : 0
        }
    }

    /// Raises `Z_PRIMARYKEY.Z_MAX` of a root entity by `count` (inside the caller's transaction)
    /// and returns the first reserved key.
    func reserveKeys(_ db: SQLiteConnection, root: EntityDescription, entityNumber number: Int, count: Int) throws -> Int64 {
        try reserveKeys(db, entityNumber: number, count: count, name: root.name)
    }

    /// The same for any `Z_PRIMARYKEY` row (history entities included). The counter is checked
    /// before it is raised: SQLite would turn an `INTEGER` past `Int64.max` into a `REAL`.
    func reserveKeys(_ db: SQLiteConnection, entityNumber number: Int, count: Int, name: String? = nil) throws -> Int64 {
        let table = name ?? "Z_ENT \(number)"
        let select = try db.cachedStatement("SELECT Z_MAX, typeof(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
        let current: Int64
        do {
            defer { select.reset() }
            try select.bind([.integer(Int64(number))])
            guard try select.step() else {
                throw CoreDataError(.persistentStoreOperation, "The store's Z_PRIMARYKEY table has no row for the entity \(table).")
            }
            let real = select.double(at: 0)
            switch select.string(at: 1) {
            case "integer": current = select.int64(at: 0)
            case "null": current = 0
            case "real" where (0..<0x1p53).contains(real) && real.rounded() == real:
                current = Int64(real)   // integral and exact: written by another tool
            default: throw KeyCounter.outOfRange("the \(select.string(at: 1)) '\(select.string(at: 0))'", table: table)
            }
        }
        let raised = try KeyCounter.raised(current, by: count, table: table)
        let update = try db.cachedStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        try update.bind([.integer(raised), .integer(Int64(number))])
        try update.run()
        return current + 1
    }

    package func save(_ request: StoreSaveRequest, resolving resolve: StoreConflictResolver?,
                      beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome {
        let layout = try currentLayout()
        return try StoreSaveRules.save(request, resolving: resolve, recordingHistory: tracksHistory, beforeCommit: beforeCommit) { attempt in
            try withWriter { db in
                try db.execute("BEGIN IMMEDIATE")
                return try StoreSaveOutcome.settling(commit: { try db.execute("COMMIT") }, rollback: { try db.execute("ROLLBACK") }) {
                    try checkModelUnchanged(db)
                    var transaction = SQLiteSaveTransaction(store: self, db: db, layout: layout)
                    return try attempt(&transaction)
                }
            }
        }
    }
}

/// A save's steps in the SQLite store, inside the writer's `BEGIN IMMEDIATE` transaction (owned by
/// the writer connection's lock for its whole life). Optimistic locking is one statement per row:
/// `UPDATE … WHERE Z_PK = ? AND Z_OPT = ?` and `DELETE … WHERE Z_PK = ? AND Z_OPT = ?`, a row
/// changed when SQLite reports one change.
struct SQLiteSaveTransaction: StoreSaveTransaction {
    let store: SQLiteStore
    let db: SQLiteConnection
    let layout: RelationalLayout

    /// One update statement per entity and set of changed columns (usually one per save), looked
    /// up once per run of updates.
    private var updateStatements: [UpdateShape: (SQLiteStatement, RelationalLayout.EntityMapping)] = [:]

    /// One delete statement per entity, looked up once per run of deletions (a cascade interleaves
    /// entities: the statement's text is built once per entity, not once per run).
    private var deleteStatements: [ObjectIdentifier: SQLiteStatement] = [:]

    private struct UpdateShape: Hashable {
        var entity: ObjectIdentifier
        var slots: [Int]
    }

    init(store: SQLiteStore, db: SQLiteConnection, layout: RelationalLayout) {
        self.store = store
        self.db = db
        self.layout = layout
    }

    mutating func write(_ update: StoreSaveRequest.Update) throws -> Bool {
        let (statement, mapping) = try updateStatement(for: update)
        return try write(update, with: statement, mapping: mapping)
    }

    /// Updates come in runs of one entity and one list of slots (a bulk update shares the list):
    /// a run's statement is found once, and the updates are read in place (a copy of each would
    /// retain and release its entity, values and slot lists).
    mutating func write(_ updates: [StoreSaveRequest.Update]) throws -> [Bool] {
        var written: [Bool] = []
        written.reserveCapacity(updates.count)
        try updates.withUnsafeBufferPointer { rows in
            try forEachRun(of: rows.count, { rows[$1].entity === rows[$0].entity && rows[$1].slots == rows[$0].slots }) { run in
                let (statement, mapping) = try updateStatement(for: rows[run.lowerBound])
                for index in run { written.append(try write(rows[index], with: statement, mapping: mapping)) }
            }
        }
        return written
    }

    /// The prepared statement for updates of `update`'s entity and slots, and the entity's mapping.
    private mutating func updateStatement(for update: StoreSaveRequest.Update) throws -> (SQLiteStatement, RelationalLayout.EntityMapping) {
        let shape = UpdateShape(entity: ObjectIdentifier(update.entity), slots: update.slots)
        if let cached = updateStatements[shape] { return cached }
        let mapping = try layout.mapping(for: update.entity)
        let statement = try db.cachedStatement(RelationalLayout.updateRowStatement(mapping, slots: update.slots).rendered(for: .sqlite).sql)
        updateStatements[shape] = (statement, mapping)
        return (statement, mapping)
    }

    /// Binds one update to its statement and runs it; whether the row had the expected version.
    private mutating func write(_ update: StoreSaveRequest.Update, with statement: SQLiteStatement, mapping: RelationalLayout.EntityMapping) throws -> Bool {
        // The parameters of `updateRowStatement` (`updateRowValues`), bound in place without
        // building their array: Z_OPT, the changed columns, the Z_ENT of changed to-ones into
        // hierarchies, then the key and the expected version.
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
        return db.changes > 0
    }

    mutating func remove(_ delete: StoreSaveRequest.Delete) throws -> Bool {
        try remove(delete.primaryKey, expectedVersion: delete.expectedVersion, with: removeStatement(for: delete.entity))
    }

    /// Deletions come in runs of one entity: a run's statement is found once, and the deletions
    /// are read in place (a copy of each would retain and release its entity and last values).
    mutating func remove(_ deletes: [StoreSaveRequest.Delete]) throws -> [Bool] {
        var removed: [Bool] = []
        removed.reserveCapacity(deletes.count)
        try deletes.withUnsafeBufferPointer { rows in
            try forEachRun(of: rows.count, { rows[$1].entity === rows[$0].entity }) { run in
                let statement = try removeStatement(for: rows[run.lowerBound].entity)
                for index in run {
                    removed.append(try remove(rows[index].primaryKey, expectedVersion: rows[index].expectedVersion, with: statement))
                }
            }
        }
        return removed
    }

    /// The prepared statement that deletes rows of `entity` (one text per entity; key and version
    /// bound in order).
    private mutating func removeStatement(for entity: EntityDescription) throws -> SQLiteStatement {
        if let cached = deleteStatements[ObjectIdentifier(entity)] { return cached }
        let mapping = try layout.mapping(for: entity)
        let statement = try db.cachedStatement(RelationalLayout.removeRowStatement(mapping.table).rendered(for: .sqlite).sql)
        deleteStatements[ObjectIdentifier(entity)] = statement
        return statement
    }

    /// Deletes one row when it still has `expectedVersion`; whether it did.
    private mutating func remove(_ primaryKey: Int64, expectedVersion: Int64, with statement: SQLiteStatement) throws -> Bool {
        statement.bind(primaryKey, at: 1)
        statement.bind(expectedVersion, at: 2)
        try statement.run()
        return db.changes > 0
    }

    mutating func currentRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot? {
        let mapping = try layout.mapping(for: entity)
        let statement = try db.cachedStatement(RelationalLayout.currentRowQuery(mapping, key: primaryKey))
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return RowSnapshot(values: store.readValues(statement, from: 1, mapping: mapping, layout: layout), version: statement.int64(at: 0))
    }

    mutating func insert(_ inserts: [StoreSaveRequest.Insert]) throws {
        var statements: [ObjectIdentifier: (SQLiteStatement, Int64, RelationalLayout.EntityMapping)] = [:]
        // Rows come in runs of one entity: its statement is looked up once per run, and the rows
        // are read in place (a copy of each would retain and release its entity and values).
        try inserts.withUnsafeBufferPointer { rows in
            try forEachRun(of: rows.count, { rows[$1].entity === rows[$0].entity }) { run in
                let key = ObjectIdentifier(rows[run.lowerBound].entity)
                let statement: SQLiteStatement, entityNumber: Int64, mapping: RelationalLayout.EntityMapping
                if let cached = statements[key] {
                    (statement, entityNumber, mapping) = cached
                } else {
                    mapping = try layout.mapping(for: rows[run.lowerBound].entity)
                    let sql = RelationalLayout.insertStatement(mapping.table, columns: mapping.insertColumns).rendered(for: .sqlite).sql
                    (statement, entityNumber) = (try db.cachedStatement(sql), Int64(mapping.entityNumbers[0]))
                    statements[key] = (statement, entityNumber, mapping)
                }
                let plain = mapping.entityColumns.isEmpty
                for index in run {
                    statement.bind(rows[index].primaryKey, at: 1)
                    statement.bind(entityNumber, at: 2)
                    if plain {
                        try statement.bind(rows[index].values, from: 3)
                    } else {
                        try statement.bind(layout.insertValues(rows[index].values, mapping: mapping), from: 3)
                    }
                    try statement.run()
                }
            }
        }
    }

    mutating func writeJoins(_ joins: [StoreSaveRequest.JoinChange]) throws {
        for join in joins {
            guard case .joinTable(let table, let ownColumn, let otherColumn, _, _) = try layout.storage(of: join.relationship) else { continue }
            let (source, destination) = (ManagedValue.integer(join.source), ManagedValue.integer(join.destination))
            let statement: SQLFragment = join.isInsert
                ? """
                    INSERT OR IGNORE INTO \(identifier: table) (\(identifier: ownColumn), \(identifier: otherColumn)) \
                    VALUES (\(bind: source), \(bind: destination))
                    """
                : """
                    DELETE FROM \(identifier: table) \
                    WHERE \(identifier: ownColumn) = \(bind: source) AND \(identifier: otherColumn) = \(bind: destination)
                    """
            try db.cachedStatement(statement).run()
        }
    }

    mutating func writeOrders(_ orders: [StoreSaveRequest.OrderChange]) throws {
        for change in orders {
            for (index, member) in change.members.enumerated() {
                guard let update = try layout.orderUpdate(change.relationship, order: RelationalLayout.orderValue(index), member: member,
                                                          source: change.source) else { break }
                try db.cachedStatement(update).run()
            }
        }
    }

    mutating func recordHistory(author: HistoryAuthor, changes: [StoreHistoryChange]) throws {
        try store.recordHistory(db, layout: layout, author: author, changes: changes)
    }
}

/// Calls `body` with each run of consecutive indexes of `0..<count` that `sameRun(first, index)`
/// keeps with the run's first index, in order: a save's rows come in runs of one entity (and, for
/// updates, one list of slots), each written through one statement.
private func forEachRun(of count: Int, _ sameRun: (Int, Int) -> Bool, _ body: (Range<Int>) throws -> Void) rethrows {
    var start = 0
    while start < count {
        var end = start + 1
        while end < count && sameRun(start, end) { end += 1 }
        try body(start..<end)
        start = end
    }
}
