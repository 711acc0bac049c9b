import Foundation
import OpenCoreDataCore

/// What an SQLite store holds, read without opening it in a coordinator: its metadata, its
/// entities with their row counts (from `Z_PRIMARYKEY`, so even a store without any model
/// answers), its other tables, the model it carries and a summary of its history. For
/// forensic and server-side use (`ocd inspect`). The file is opened read-only.
public struct StoreInspection: Sendable {
    /// One entity of the store, as `Z_PRIMARYKEY` lists it.
    public struct Entity: Sendable {
        /// The entity's name.
        public var name: String
        /// Its `Z_ENT`.
        public var number: Int
        /// Its superentity's name, if any.
        public var superentityName: String?
        /// The table its rows live in (`Z` + its root's name).
        public var table: String
        /// Rows of exactly this entity (not its sub-entities).
        public var rowCount: Int
    }

    /// A summary of the persistent history tables.
    public struct History: Sendable {
        /// Number of transactions (`ATRANSACTION` rows).
        public var transactionCount: Int
        /// Number of changes (`ACHANGE` rows).
        public var changeCount: Int
        /// The first transaction's timestamp.
        public var firstTimestamp: Date?
        /// The last transaction's timestamp.
        public var lastTimestamp: Date?
        /// The distinct transaction authors.
        public var authors: [String]
    }

    /// The store file.
    public var url: URL
    /// The metadata (`Z_METADATA`): `NSStoreUUID`, `NSStoreModelVersionHashes`,
    /// `NSPersistenceFrameworkVersion`, …; empty when the store has none.
    public var metadata: [String: any Sendable]
    /// The entities in `Z_ENT` order (history entities excluded).
    public var entities: [Entity]
    /// Every table with its row count, by name.
    public var tables: [(name: String, rowCount: Int)]
    /// Whether `Z_MODELCACHE` holds a model.
    public var hasModelCache: Bool
    /// The history summary; nil when the store records none.
    public var history: History?

    /// Inspects the SQLite store at `url`. Throws for a file that is not an SQLite store.
    public init(storeAt url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError(.persistentStoreOpen, "There is no store at \(url.path).")
        }
        self.url = url
        let db = try SQLiteConnection(path: url.path, readOnly: true)
        metadata = try db.tableExists("Z_METADATA") ? SQLiteStore.readMetadata(db) : [:]
        hasModelCache = (try? SQLiteModelCache.exists(in: db)) ?? false

        var tables: [(name: String, rowCount: Int)] = []
        let names = try Self.strings(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        for name in names { tables.append((name, try Self.count(db, "SELECT COUNT(*) FROM \(SQLiteConnection.quoted(name))"))) }
        self.tables = tables

        var entities: [Entity] = []
        if try db.tableExists("Z_PRIMARYKEY") {
            let statement = try db.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
            defer { statement.finalize() }
            var rows: [(number: Int, name: String, parent: Int)] = []
            while try statement.step() { rows.append((Int(statement.int64(at: 0)), statement.string(at: 1), Int(statement.int64(at: 2)))) }
            let byNumber = Dictionary(rows.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
            let tableNames = Set(names)
            for row in rows {
                // Up to the root entity, whose table holds the row; a damaged or crafted file may
                // make Z_SUPER a cycle, so the walk stops after as many steps as there are entities.
                var root = row, steps = 0
                while let parent = byNumber[root.parent], parent.number != row.number, steps < rows.count {
                    root = parent
                    steps += 1
                }
                let table = "Z" + root.name.uppercased()
                let count = tableNames.contains(table) ? try Self.count(db, "SELECT COUNT(*) FROM \(SQLiteConnection.quoted(table)) WHERE Z_ENT = ?", [.integer(Int64(row.number))]) : 0
                entities.append(Entity(name: row.name, number: row.number, superentityName: byNumber[row.parent]?.name, table: table, rowCount: count))
            }
        }
        self.entities = entities

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
                              authors: try Self.strings(db, "SELECT DISTINCT ZAUTHOR FROM ATRANSACTION WHERE ZAUTHOR IS NOT NULL ORDER BY ZAUTHOR"))
        }
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
