import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

extension StoreInspection {
    /// Inspects the PostgreSQL store at `url` (`postgres://user@host:port/database?schema=…`),
    /// read-only and without its model: what `ocd inspect` prints for an SQLite file. Table names
    /// are shown as Core Data spells them (PostgreSQL keeps them in lower case). Throws when the
    /// server cannot be reached; a schema without a store inspects as empty.
    public init(postgreSQLStoreAt url: URL) throws {
        let storeURL = try PostgreSQLStoreURL(url)
        let session = try PostgreSQLSessionPool(url: storeURL).connect()
        defer { session.close() }
        let schema = storeURL.schema
        func count(_ table: String, entity: Int? = nil) throws -> Int {
            let from: SQLFragment = "SELECT COUNT(*) FROM \(quoted: table.lowercased(), in: schema)"
            let rows = try session.execute(entity.map { from + " WHERE Z_ENT = \(bind: .integer(Int64($0)))" } ?? from)
            if case .integer(let value)? = rows.rows.first?.first { return Int(value) }
            return 0
        }
        let names = try session.execute("""
            SELECT upper(table_name) FROM information_schema.tables \
            WHERE table_schema = \(bind: .string(schema)) AND table_type = 'BASE TABLE' ORDER BY 1
            """ as SQLFragment)
            .rows.compactMap { row -> String? in if case .string(let name)? = row.first { name } else { nil } }
        let tables = try names.map { ($0, try count($0)) }
        let metadata = names.contains("Z_METADATA") ? try PostgreSQLStore.readMetadata(session) : [:]
        var entities: [Entity] = []
        if names.contains("Z_PRIMARYKEY") {
            let rows = try session.execute("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT").rows.compactMap { row -> (number: Int, name: String, parent: Int)? in
                guard case .integer(let number) = row[0], case .string(let name) = row[1] else { return nil }
                if case .integer(let parent) = row[2] { return (Int(number), name, Int(parent)) }
                return (Int(number), name, 0)
            }
            entities = try Self.entities(rows, tables: Set(names)) { table, number in try count(table, entity: number) }
        }
        var history: History?
        if names.contains("ATRANSACTION") && names.contains("ACHANGE") && names.contains("ATRANSACTIONSTRING") {
            let bounds = try session.execute("SELECT MIN(ZTIMESTAMP), MAX(ZTIMESTAMP) FROM ATRANSACTION").rows.first ?? []
            func date(_ value: ManagedValue?) -> Date? {
                if case .double(let seconds)? = value { Date(timeIntervalSinceReferenceDate: seconds) } else { nil }
            }
            let authors = try session.execute(text: HistoryTables.authorsQuery).rows.compactMap { row -> String? in
                if case .string(let name)? = row.first { name } else { nil }
            }
            history = History(transactionCount: try count("ATRANSACTION"), changeCount: try count("ACHANGE"),
                              firstTimestamp: date(bounds.first), lastTimestamp: date(bounds.last), authors: authors)
        }
        let hasModelCache = names.contains("Z_MODELCACHE") ? try count("Z_MODELCACHE") > 0 : false
        self.init(url: url, metadata: metadata, entities: entities, tables: tables, hasModelCache: hasModelCache, history: history)
    }
}
