import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Persistent history in Core Data's tables (``HistoryTables``), in the store's schema.
///
/// **Numbers follow commit order.** Writers on several machines commit concurrently; a reader
/// that fetched the history after transaction 42 must never miss a 41 committed later. The
/// transaction number is taken as the last write of a save (``StoreSaveRules`` records history
/// after every other write), by `UPDATE Z_PRIMARYKEY … RETURNING`, whose row lock is held until
/// the commit: the next writer gets its number only once this one committed.
extension PostgreSQLStore {
    /// Creates the history tables (and their `Z_PRIMARYKEY` rows) when missing, with one
    /// `ZTOMBSTONE<n>` column per attribute an entity keeps on deletion (inside `load`'s
    /// transaction). Only what is missing is made: DDL locks whole tables even when it changes
    /// nothing, and a store opening while others save must not hold such locks (it deadlocked
    /// with their history writes).
    func ensureHistoryTables(_ session: PostgreSQLSession, model: ManagedObjectModel) throws {
        let schema = url.schema
        func exists(_ table: String) throws -> Bool { try session.tableExists(table, inSchema: schema) }
        if try !exists("achange") {
            // Change keys come from a sequence, not Z_PRIMARYKEY: a counter row would stay locked
            // by each saving transaction until its commit, and serialise every save.
            try session.execute("CREATE SEQUENCE ACHANGE_Z_PK_SEQ")
            try session.execute("""
                CREATE TABLE ACHANGE ( Z_PK bigint PRIMARY KEY DEFAULT nextval('achange_z_pk_seq'), Z_ENT \
                bigint, Z_OPT bigint, ZCHANGETYPE bigint, ZENTITY bigint, ZENTITYPK bigint, ZTRANSACTIONID \
                bigint, ZCOLUMNS bytea )
                """)
            try session.execute("CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)")
        }
        let tombstones = model.entities.map { $0.tombstoneAttributes.count }.max() ?? 0
        let columnQuery: SQLFragment = """
            SELECT column_name::text FROM information_schema.columns WHERE table_schema = \(bind: .string(schema)) AND table_name = 'achange'
            """
        let columns = Set(try session.execute(columnQuery).rows.compactMap { row -> String? in
            if case .string(let name) = row[0] { name } else { nil }
        })
        for index in 0..<tombstones where !columns.contains("ztombstone\(index)") {
            // Tombstone values of any attribute type, as text (`HistoryValueText`).
            try session.execute("ALTER TABLE ACHANGE ADD COLUMN \(identifier: "ZTOMBSTONE\(index)") text" as SQLFragment)
        }
        if try !exists("atransaction") {
            try session.execute("""
                CREATE TABLE ATRANSACTION ( Z_PK bigint PRIMARY KEY, Z_ENT bigint, Z_OPT bigint, ZAUTHORTS \
                bigint, ZBUNDLEIDTS bigint, ZCONTEXTNAMETS bigint, ZPROCESSIDTS bigint, ZTIMESTAMP double \
                precision, ZAUTHOR text, ZBUNDLEID text, ZCONTEXTNAME text, ZPROCESSID text, ZQUERYGEN bytea )
                """)
            try session.execute("CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP)")
        }
        if try !exists("atransactionstring") {
            try session.execute("CREATE TABLE ATRANSACTIONSTRING ( Z_PK bigint PRIMARY KEY, Z_ENT bigint, Z_OPT bigint, ZNAME text COLLATE \"C\" )")
            try session.execute("CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME)")
        }
        let presentQuery: SQLFragment = "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT >= \(bind: .integer(Int64(HistoryTables.changeEntity)))"
        let present = Set(try session.execute(presentQuery).rows.compactMap { row -> Int64? in
            if case .integer(let number) = row[0] { number } else { nil }
        })
        for (number, name) in [(HistoryTables.changeEntity, "CHANGE"), (HistoryTables.transactionEntity, "TRANSACTION"), (HistoryTables.stringEntity, "TRANSACTIONSTRING")]
            where !present.contains(Int64(number)) {
            let row: [ManagedValue] = [.integer(Int64(number)), .string(name)]
            try session.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (\(list: row), 0, 0)" as SQLFragment)
        }
    }

    /// Records a transaction and its changes (inside the caller's transaction, as its last write).
    ///
    /// The transaction's number is taken, the transaction row written and its changes inserted by
    /// one statement, so that the number's row lock — held until the commit, which orders numbers
    /// as commits — covers one round trip and the commit. (Strings are looked up before.) History
    /// imported from another store gives its own `number` and `timestamp`.
    func recordHistory(_ session: PostgreSQLSession, layout: RelationalLayout, author: HistoryAuthor, changes: [StoreHistoryChange],
                       number given: Int64? = nil, timestamp: Date = Date()) throws {
        guard tracksHistory, !changes.isEmpty else { return }
        let strings = try [author.author, author.bundleID, author.contextName, author.processID].map { try $0.map { try stringKey(session, $0) } }
        let width = changes.map { $0.type == .delete ? $0.entity.tombstoneAttributes.count : 0 }.max() ?? 0
        let columns = SQLFragment.identifiers(["Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZCOLUMNS"]
                                              + (0..<width).map { "ZTOMBSTONE\($0)" })
        // Each value cast, so that a column of NULLs alone still has its type.
        let types = ["bigint", "bigint", "bigint", "bigint", "bigint", "bytea"] + Array(repeating: "text", count: width)
        // Changes go in chunks (PostgreSQL binds at most 65,535 values per statement): the first
        // with the transaction, the others with its number.
        let perChunk = 60_000 / types.count
        var number: Int64?
        for start in stride(from: 0, to: changes.count, by: perChunk) {
            var rows: [SQLFragment] = []
            for item in changes[start..<min(start + perChunk, changes.count)] {
                let kept = item.tombstoneValues.map { value -> ManagedValue in HistoryValueText.text(value).map { .string($0) } ?? .null }
                let values: [ManagedValue] = [.integer(Int64(HistoryTables.changeEntity)), .integer(1), .integer(Int64(item.type.rawValue)),
                                              .integer(Int64(layout.entityNumber(of: item.entity))), .integer(item.primaryKey),
                                              item.changedSlots.map { .data(HistoryTables.bitVector($0)) } ?? .null]
                    + kept + Array(repeating: .null, count: width - kept.count)
                rows.append(PostgreSQLStore.typedRow(values, types: types))
            }
            let insertChanges: SQLFragment = """
                INSERT INTO ACHANGE (\(columns), ZTRANSACTIONID) SELECT v.*, t.Z_PK FROM t, \
                (VALUES \(SQLFragment.joined(rows, separator: ", "))) AS v RETURNING ZTRANSACTIONID
                """
            // The number: the next one (first chunk), the imported one, or the one the first
            // chunk took (later chunks).
            let insertTransaction: SQLFragment = """
                INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
                """
            let transactionEntity = ManagedValue.integer(Int64(HistoryTables.transactionEntity))
            let authorValues: [ManagedValue] = strings.map { key -> ManagedValue in key.map { .integer($0) } ?? .null }
                + [.double(timestamp.timeIntervalSinceReferenceDate)]
            let author = PostgreSQLStore.typedCells(authorValues, types: ["bigint", "bigint", "bigint", "bigint", "double precision"])
            let transactionValues: SQLFragment = "\(bind: transactionEntity), 1, \(author)"
            let statement: SQLFragment = switch (number, given) {
            case (nil, nil):
                """
                WITH n AS (UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_ENT = \(bind: transactionEntity) RETURNING Z_MAX), \
                t AS (\(insertTransaction) SELECT Z_MAX, \(transactionValues) FROM n RETURNING Z_PK) \(insertChanges)
                """
            case (nil, let given?):
                "WITH t AS (\(insertTransaction) VALUES (\(bind: .integer(given))::bigint, \(transactionValues)) RETURNING Z_PK) \(insertChanges)"
            case (let number?, _):
                "WITH t AS (SELECT \(bind: .integer(number))::bigint AS Z_PK) \(insertChanges)"
            }
            let returned = try session.execute(statement).rows
            guard case .integer(let recorded)? = returned.first?.first else {
                throw CoreDataError(.persistentStoreOperation, """
                    The PostgreSQL store's Z_PRIMARYKEY table has no row for its history transactions (Z_ENT \
                    \(HistoryTables.transactionEntity)).
                    """)
            }
            number = recorded
        }
    }

    package func importHistory(_ transactions: [HistoryTransactionRecord], lastNumber: Int64) throws {
        guard tracksHistory else { return }
        try checkWritable()
        let layout = try currentLayout()
        try checkedTransaction { session in
            for transaction in transactions {
                try recordHistory(session, layout: layout, author: HistoryAuthor(of: transaction),
                                  changes: transaction.changes.compactMap(StoreHistoryChange.init),
                                  number: transaction.number, timestamp: transaction.timestamp)
            }
            try session.execute("""
                UPDATE Z_PRIMARYKEY SET Z_MAX = GREATEST(Z_MAX, \(bind: .integer(lastNumber))) \
                WHERE Z_ENT = \(bind: .integer(Int64(HistoryTables.transactionEntity)))
                """ as SQLFragment)
        }
    }

    /// The key of a string in `ATRANSACTIONSTRING`, adding it when new (a writer adding the same
    /// string at once waits for the other's commit, then finds its row).
    private func stringKey(_ session: PostgreSQLSession, _ name: String) throws -> Int64 {
        let select: SQLFragment = "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = \(bind: .string(name))"
        if case .integer(let key)? = try session.execute(select).rows.first?.first { return key }
        let key = try reserveKeys(session, entityNumber: HistoryTables.stringEntity, count: 1)
        try session.execute("""
            INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) \
            VALUES (\(list: [.integer(key), .integer(Int64(HistoryTables.stringEntity))]), 1, \(bind: .string(name))) ON CONFLICT (ZNAME) DO NOTHING
            """ as SQLFragment)
        guard case .integer(let found)? = try session.execute(select).rows.first?.first else {
            throw CoreDataError(.persistentStoreOperation, "The history string '\(name)' could not be recorded in the PostgreSQL store.")
        }
        return found
    }

    // MARK: - Reading and deleting

    package func fetchHistory(after number: Int64?, date: Date?, limit: Int, includingChanges: Bool) throws -> [HistoryTransactionRecord] {
        guard tracksHistory else { return [] }
        let layout = try currentLayout()
        return try pool.withSession { session in
            // One snapshot for the transactions and their changes.
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? session.execute("COMMIT") }
            return try HistoryReading.read(after: number, date: date, limit: limit, includingChanges: includingChanges, layout: layout,
                                           using: session)
        }
    }

    package func deleteHistory(through number: Int64?, before date: Date?) throws -> Int {
        guard tracksHistory else { return 0 }
        try checkWritable()
        return try checkedTransaction { session in
            try HistoryReading.delete(through: number, before: date, using: session)
        }
    }

    package func lastHistoryNumber() throws -> Int64? {
        guard tracksHistory else { return nil }
        return try pool.withSession { try HistoryReading.lastNumber(using: $0) }
    }
}

extension PostgreSQLSession: SQLSession {
    package func forEachRow(_ statement: SQLFragment, _ body: (PostgreSQLRow) throws -> Void) throws {
        for row in try execute(statement).rows { try body(PostgreSQLRow(values: row)) }
    }

    package func run(_ statement: SQLFragment) throws -> Int {
        try execute(statement).changed
    }
}

/// A row as the session decoded it.
package struct PostgreSQLRow: SQLRow {
    package let values: [ManagedValue]

    package func integer(_ column: Int) -> Int64? {
        if case .integer(let value) = values[column] { value } else { nil }
    }

    package func real(_ column: Int) -> Double? { values[column].numericValue }

    package func text(_ column: Int) -> String? {
        if case .string(let value) = values[column] { value } else { nil }
    }

    package func bytes(_ column: Int) -> Data? {
        if case .data(let value) = values[column] { value } else { nil }
    }

    package var columnCount: Int { values.count }

    package func tombstone(_ column: Int, type: AttributeType) -> ManagedValue {
        if case .string(let text) = values[column] { HistoryValueText.value(text, type: type) } else { .null }
    }

    package func value(_ column: Int, type: AttributeType) -> ManagedValue { PostgreSQLStore.attributeValue(values[column], type: type) }

    package func raw(_ column: Int) -> ManagedValue { values[column] }
}

/// Tombstone values as text, so that one `ZTOMBSTONE<n>` column holds values of any attribute
/// type (SQLite's columns take any value; PostgreSQL's have one type). Read back by the
/// attribute's type.
enum HistoryValueText {
    static func text(_ value: ManagedValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let v): String(v)
        case .bool(let v): v ? "1" : "0"
        case .double(let v): "\(v)"
        case .decimal(let v): "\(v)"
        case .string(let v): v
        case .url(let v): v.absoluteString
        case .date(let v): "\(v.timeIntervalSinceReferenceDate)"
        case .data(let v): v.base64EncodedString()
        case .uuid(let v): v.uuidString
        case .object(let id): id.primaryKey.map(String.init)
        }
    }

    static func value(_ text: String, type: AttributeType) -> ManagedValue {
        switch type {
        case .integer16, .integer32, .integer64, .objectID: Int64(text).map { .integer($0) } ?? .null
        case .boolean: .bool(text == "1")
        case .double, .float: Double(text).map { .double($0) } ?? .null
        case .date: Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .decimal: Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) } ?? .null
        case .string: .string(text)
        case .uri: URL(string: text).map { .url($0) } ?? .null
        case .binaryData, .transformable: Data(base64Encoded: text).map { .data($0) } ?? .null
        case .uuid: UUID(uuidString: text).map { .uuid($0) } ?? .null
        }
    }
}
