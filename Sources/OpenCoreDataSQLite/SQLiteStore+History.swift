import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Persistent history in Core Data's tables: `ATRANSACTION` (one row per save or batch request),
/// `ACHANGE` (one row per changed object), `ATRANSACTIONSTRING` (authors, context names, process
/// and bundle identifiers, stored once and referenced by the `…TS` columns). Their `Z_ENT`s are
/// 16002, 16001 and 16003, and their keys come from `Z_PRIMARYKEY` like any entity's.
extension SQLiteStore {
    static let changeEntity = HistoryTables.changeEntity
    static let transactionEntity = HistoryTables.transactionEntity
    static let stringEntity = HistoryTables.stringEntity

    /// Creates the history tables (and their `Z_PRIMARYKEY` rows) when missing, with one
    /// `ZTOMBSTONE<n>` column per attribute an entity keeps on deletion.
    func ensureHistoryTables(_ db: SQLiteConnection, model: ManagedObjectModel) throws {
        let tombstones = model.entities.map { $0.tombstoneAttributes.count }.max() ?? 0
        try db.transaction {
            if try !db.tableExists("ACHANGE") {
                var extra = SQLFragment()
                for index in 0..<tombstones { extra += ", \(identifier: "ZTOMBSTONE\(index)") BLOB" }
                try db.execute("""
                    CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, \
                    ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB\(extra) )
                    """ as SQLFragment)
                try db.execute("CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)")
            } else {
                let existing = Set(try db.columns(of: "ACHANGE"))
                for index in 0..<tombstones where !existing.contains("ZTOMBSTONE\(index)") {
                    try db.execute("ALTER TABLE ACHANGE ADD COLUMN \(identifier: "ZTOMBSTONE\(index)") BLOB" as SQLFragment)
                }
            }
            if try !db.tableExists("ATRANSACTION") {
                try db.execute("""
                    CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, \
                    ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, \
                    ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID \
                    VARCHAR, ZQUERYGEN BLOB )
                    """)
                for column in ["ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS"] {
                    let index = "ATRANSACTION_\(column)_INDEX"
                    try db.execute("CREATE INDEX \(identifier: index) ON ATRANSACTION (\(identifier: column))" as SQLFragment)
                }
                try db.execute("CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)")
                try db.execute("CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)")
            }
            if try !db.tableExists("ATRANSACTIONSTRING") {
                try db.execute("CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )")
                try db.execute("CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)")
            }
            let keys = try db.cachedStatement("INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)")
            for (number, name) in [(Self.changeEntity, "CHANGE"), (Self.transactionEntity, "TRANSACTION"), (Self.stringEntity, "TRANSACTIONSTRING")] {
                try keys.bind([.integer(Int64(number)), .string(name)])
                try keys.run()
            }
        }
    }

    /// Records a transaction and its changes (inside the caller's write transaction), under the
    /// next number or, for history imported from another store, under `number` at `timestamp`.
    func recordHistory(_ db: SQLiteConnection, layout: RelationalLayout, author: HistoryAuthor, changes: [StoreHistoryChange],
                       number given: Int64? = nil, timestamp: Date = Date()) throws {
        guard tracksHistory, !changes.isEmpty else { return }
        let number = try given ?? reserveKeys(db, entityNumber: Self.transactionEntity, count: 1)
        let strings = try [author.author, author.bundleID, author.contextName, author.processID].map { try $0.map { try stringKey(db, $0) } }
        let transactionColumns = ["Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP"]
        let insertTransaction = RelationalLayout.insertRowStatement("ATRANSACTION", columns: transactionColumns)
        let transaction = try db.cachedStatement(insertTransaction.rendered(for: .sqlite).sql)
        try transaction.bind([.integer(number), .integer(Int64(Self.transactionEntity)), .integer(1)]
                             + strings.map { $0.map { .integer($0) } ?? .null } + [.double(timestamp.timeIntervalSinceReferenceDate)])
        try transaction.run()
        var next = try reserveKeys(db, entityNumber: Self.changeEntity, count: changes.count)
        let tombstoneWidth = changes.map { $0.type == .delete ? $0.entity.tombstoneAttributes.count : 0 }.max() ?? 0
        let changeColumns = ["Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
            + (0..<tombstoneWidth).map { "ZTOMBSTONE\($0)" }
        let change = try db.cachedStatement(RelationalLayout.insertRowStatement("ACHANGE", columns: changeColumns).rendered(for: .sqlite).sql)
        var index = 0
        while index < changes.count {
            let run = Self.insertRun(in: changes, from: index)
            if run >= Self.shortestInsertRun {
                // Inserts of one entity under consecutive keys (a batch insert's rows, a save's new
                // objects): one statement writes them all.
                let first = changes[index].primaryKey
                let bulk = try db.cachedStatement(Self.insertRunStatement)
                try bulk.bind([.integer(first), .integer(first + Int64(run - 1)), .integer(next - first), .integer(Int64(Self.changeEntity)),
                               .integer(Int64(PersistentHistoryChange.ChangeType.insert.rawValue)),
                               .integer(Int64(layout.entityNumber(of: changes[index].entity))), .integer(number)])
                try bulk.run()
                next += Int64(run)
                index += run
                continue
            }
            let item = changes[index]
            index += 1
            let kept = item.tombstoneValues
            let tombstone = kept + Array(repeating: ManagedValue.null, count: tombstoneWidth - kept.count)
            let columns: ManagedValue = item.changedSlots.map { .data(HistoryTables.bitVector($0)) } ?? .null
            try change.bind([.integer(next), .integer(Int64(Self.changeEntity)), .integer(1), .integer(Int64(item.type.rawValue)),
                             .integer(Int64(layout.entityNumber(of: item.entity))), .integer(item.primaryKey), .integer(number), columns] + tombstone)
            try change.run()
            next += 1
        }
    }

    /// Below this many, a run of inserts is recorded a row at a time.
    private static let shortestInsertRun = 8

    /// How many changes from `start` are inserts of one entity under consecutive keys.
    private static func insertRun(in changes: [StoreHistoryChange], from start: Int) -> Int {
        let first = changes[start]
        guard first.type == .insert, first.changedSlots == nil else { return 0 }
        var end = start + 1
        while end < changes.count, changes[end].type == .insert, changes[end].changedSlots == nil, changes[end].entity === first.entity,
              changes[end].primaryKey == first.primaryKey + Int64(end - start) {
            end += 1
        }
        return end - start
    }

    /// The `ACHANGE` rows of a run of inserts: keys from the first to the last parameter, each
    /// change's own key the object's plus the third; then the change entity, the change type, the
    /// object's entity and the transaction.
    private static let insertRunStatement = """
        WITH RECURSIVE inserted(key) AS (SELECT ? UNION ALL SELECT key + 1 FROM inserted WHERE key < ?) \
        INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID) \
        SELECT key + ?, ?, 1, ?, ?, key, ? FROM inserted
        """

    package func importHistory(_ transactions: [HistoryTransactionRecord], lastNumber: Int64) throws {
        guard tracksHistory else { return }
        let layout = try currentLayout()
        try withWriter { db in
            try db.transaction {
                for transaction in transactions {
                    try recordHistory(db, layout: layout, author: HistoryAuthor(of: transaction),
                                      changes: transaction.changes.compactMap(StoreHistoryChange.init),
                                      number: transaction.number, timestamp: transaction.timestamp)
                }
                let keys = try db.cachedStatement("UPDATE Z_PRIMARYKEY SET Z_MAX = MAX(Z_MAX, ?) WHERE Z_ENT = ?")
                try keys.bind([.integer(lastNumber), .integer(Int64(Self.transactionEntity))])
                try keys.run()
            }
        }
    }

    /// The key of a string in `ATRANSACTIONSTRING`, adding it when new.
    private func stringKey(_ db: SQLiteConnection, _ name: String) throws -> Int64 {
        let select = try db.cachedStatement("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?")
        try select.bind([.string(name)])
        if try select.step() {
            defer { select.reset() }
            return select.int64(at: 0)
        }
        select.reset()
        let key = try reserveKeys(db, entityNumber: Self.stringEntity, count: 1)
        let insert = try db.cachedStatement("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)")
        try insert.bind([.integer(key), .integer(Int64(Self.stringEntity)), .string(name)])
        try insert.run()
        return key
    }

    // MARK: - Reading and deleting

    package func fetchHistory(after number: Int64?, date: Date?, limit: Int, includingChanges: Bool) throws -> [HistoryTransactionRecord] {
        guard tracksHistory else { return [] }
        let layout = try currentLayout()
        return try readers.read { db in
            try HistoryReading.read(after: number, date: date, limit: limit, includingChanges: includingChanges, layout: layout, using: db)
        }
    }

    package func deleteHistory(through number: Int64?, before date: Date?) throws -> Int {
        guard tracksHistory else { return 0 }
        return try withWriter { db in
            try db.transaction { try HistoryReading.delete(through: number, before: date, using: db) }
        }
    }

    package func lastHistoryNumber() throws -> Int64? {
        guard tracksHistory else { return nil }
        return try readers.read { db in try HistoryReading.lastNumber(using: db) }
    }
}

extension SQLiteConnection: SQLSession {
    package func forEachRow(_ statement: SQLFragment, _ body: (SQLiteStatement) throws -> Void) throws {
        let prepared = try cachedStatement(statement)
        defer { prepared.reset() }
        while try prepared.step() { try body(prepared) }
    }

    package func run(_ statement: SQLFragment) throws -> Int {
        try cachedStatement(statement).run()
        return changes
    }
}

extension SQLiteStatement: SQLRow {
    package func integer(_ column: Int) -> Int64? { isNull(at: Int32(column)) ? nil : int64(at: Int32(column)) }
    package func real(_ column: Int) -> Double? { isNull(at: Int32(column)) ? nil : double(at: Int32(column)) }
    package func text(_ column: Int) -> String? { isNull(at: Int32(column)) ? nil : string(at: Int32(column)) }
    package func bytes(_ column: Int) -> Data? { isNull(at: Int32(column)) ? nil : data(at: Int32(column)) }
    package func tombstone(_ column: Int, type: AttributeType) -> ManagedValue { value(at: Int32(column), type: type) }
    package func value(_ column: Int, type: AttributeType) -> ManagedValue { value(at: Int32(column), type: type) }
    package func raw(_ column: Int) -> ManagedValue { storedValue(at: Int32(column)) }
}
