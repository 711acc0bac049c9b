import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

extension StoreInspection {
    /// Inspects the SQLite store at `url`. Throws for a file that is not an SQLite store.
    public init(storeAt url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError(.persistentStoreOpen, "There is no store at \(url.path).")
        }
        let db = try SQLiteConnection(path: url.path, readOnly: true)
        let metadata = try db.tableExists("Z_METADATA") ? SQLiteStore.readMetadata(db) : [:]
        let hasModelCache = (try? SQLiteModelCache.exists(in: db)) ?? false

        var tables: [(name: String, rowCount: Int)] = []
        let names = try Self.strings(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        for name in names { tables.append((name, try Self.count(db, "SELECT COUNT(*) FROM \(SQLiteConnection.quoted(name))"))) }

        var entities: [Entity] = []
        if try db.tableExists("Z_PRIMARYKEY") {
            let statement = try db.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
            defer { statement.finalize() }
            var rows: [(number: Int, name: String, parent: Int)] = []
            while try statement.step() { rows.append((Int(statement.int64(at: 0)), statement.string(at: 1), Int(statement.int64(at: 2)))) }
            entities = try Self.entities(rows, tables: Set(names)) { table, number in
                try Self.count(db, "SELECT COUNT(*) FROM \(SQLiteConnection.quoted(table)) WHERE Z_ENT = ?", [.integer(Int64(number))])
            }
        }

        var history: History?
        if names.contains("ATRANSACTION") && names.contains("ACHANGE") {
            let timestamps = try db.prepare("SELECT MIN(ZTIMESTAMP), MAX(ZTIMESTAMP) FROM ATRANSACTION")
            defer { timestamps.finalize() }
            var first: Date?, last: Date?
            if try timestamps.step(), !timestamps.isNull(at: 0) {
                first = timestamps.value(at: 0, type: .date).anyValue(for: .date) as? Date
                last = timestamps.value(at: 1, type: .date).anyValue(for: .date) as? Date
            }
            history = History(transactionCount: try Self.count(db, "SELECT COUNT(*) FROM ATRANSACTION"),
                              changeCount: try Self.count(db, "SELECT COUNT(*) FROM ACHANGE"),
                              firstTimestamp: first, lastTimestamp: last,
                              authors: try Self.strings(db,
                                                        names.contains("ATRANSACTIONSTRING") ? HistoryTables.authorsQuery : HistoryTables.plainAuthorsQuery))
        }
        self.init(url: url, metadata: metadata, entities: entities, tables: tables, hasModelCache: hasModelCache, history: history)
    }

    private static func count(_ db: SQLiteConnection, _ sql: String, _ values: [ManagedValue] = []) throws -> Int {
        let statement = try db.prepare(sql)
        defer { statement.finalize() }
        try statement.bind(values)
        return try statement.step() ? Int(statement.int64(at: 0)) : 0
    }

    private static func strings(_ db: SQLiteConnection, _ sql: String) throws -> [String] {
        let statement = try db.prepare(sql)
        defer { statement.finalize() }
        var result: [String] = []
        while try statement.step() { result.append(statement.string(at: 0)) }
        return result
    }
}
