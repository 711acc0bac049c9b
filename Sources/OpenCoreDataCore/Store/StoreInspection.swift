import Foundation

/// What a store holds, read without opening it in a coordinator: its metadata, its entities with
/// their row counts (from `Z_PRIMARYKEY`, so even a store without any model answers), its other
/// tables, the model it carries and a summary of its history. For forensic and server-side use
/// (`ocd inspect`): `StoreInspection(storeAt:)` reads an SQLite file read-only,
/// `StoreInspection(postgreSQLStoreAt:)` a PostgreSQL schema.
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

        package init(transactionCount: Int, changeCount: Int, firstTimestamp: Date?, lastTimestamp: Date?, authors: [String]) {
            self.transactionCount = transactionCount
            self.changeCount = changeCount
            self.firstTimestamp = firstTimestamp
            self.lastTimestamp = lastTimestamp
            self.authors = authors
        }
    }

    /// The store file or URL.
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

    /// Everything inspection reports, for other store types (the PostgreSQL store's).
    package init(url: URL, metadata: [String: any Sendable], entities: [Entity], tables: [(name: String, rowCount: Int)], hasModelCache: Bool,
                 history: History?) {
        self.url = url
        self.metadata = metadata
        self.entities = entities
        self.tables = tables
        self.hasModelCache = hasModelCache
        self.history = history
    }

    /// The entities of `Z_PRIMARYKEY`'s rows, with the rows each has in its root entity's table
    /// (`rowCount(table, number)`, for tables in `tables`).
    package static func entities(_ rows: [(number: Int, name: String, parent: Int)], tables: Set<String>,
                                 rowCount: (String, Int) throws -> Int) rethrows -> [Entity] {
        let byNumber = Dictionary(rows.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        return try rows.map { row in
            // Up to the root entity, whose table holds the row; a damaged or crafted file may
            // make Z_SUPER a cycle, so the walk stops after as many steps as there are entities.
            var root = row, steps = 0
            while let parent = byNumber[root.parent], parent.number != row.number, steps < rows.count {
                root = parent
                steps += 1
            }
            let table = "Z" + root.name.uppercased()
            let count = tables.contains(table) ? try rowCount(table, row.number) : 0
            return Entity(name: row.name, number: row.number, superentityName: byNumber[row.parent]?.name, table: table, rowCount: count)
        }
    }
}
