import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    package func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let query = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .sqlite).select(FetchQuery.rowColumns(mapping))
        return try rows(query.rendered(for: .sqlite), of: request.entity, includingSubentities: request.includesSubentities, mapping: mapping,
                        layout: layout)
    }

    /// The rows of `requested` (and its sub-entities when included) a rendered query selects
    /// (`FetchQuery.rowColumns`: key, entity, version, then the table's columns); with
    /// `firstOnly`, the first row alone (a query by key: SQLite is not asked for a next row that
    /// cannot exist).
    private func rows(_ query: (sql: String, arguments: [ManagedValue]), of requested: EntityDescription, includingSubentities: Bool,
                      mapping: RelationalLayout.EntityMapping, layout: RelationalLayout, firstOnly: Bool = false) throws -> [StoreRow] {
        let mixed = mapping.hasSubentities && includingSubentities
        let allowed = includingSubentities ? mapping.entityNumbers : Array(mapping.entityNumbers.prefix(1))
        return try readers.read { db in
            let statement = try db.cachedStatement(query.sql)
            defer { statement.reset() }
            try statement.bind(query.arguments)
            var rows: [StoreRow] = []
            while try statement.step() {
                var entity = requested
                var values: [ManagedValue]
                if mapping.hasSubentities || requested.superentity != nil {
                    try Self.checkRowEntity(statement.int64(at: 1), allowed: allowed, key: statement.int64(at: 0), table: mapping.table)
                }
                if mixed, case let own = rowEntity(statement.int64(at: 1), requested: requested, layout: layout), own !== entity {
                    entity = own
                    values = readValues(statement, from: 3, mapping: try layout.mapping(for: own), layout: layout)
                } else {
                    values = readValues(statement, from: 3, mapping: mapping, layout: layout)
                }
                rows.append(StoreRow(entity: entity, primaryKey: statement.int64(at: 0),
                                     snapshot: RowSnapshot(values: values, version: statement.int64(at: 2))))
                if firstOnly { break }
            }
            return rows
        }
    }

    package func fetchKeys(_ request: StoreFetchRequest) throws -> [Int64] {
        let layout = try currentLayout()
        let query = try FetchQuery(request, mapping: try layout.mapping(for: request.entity), layout: layout, dialect: .sqlite).select("Z_PK")
        return try readers.read { db in
            let statement = try db.cachedStatement(query)
            defer { statement.reset() }
            var keys: [Int64] = []
            while try statement.step() { keys.append(statement.int64(at: 0)) }
            return keys
        }
    }

    package func count(_ request: StoreFetchRequest) throws -> Int {
        let layout = try currentLayout()
        let query = try FetchQuery(request, mapping: try layout.mapping(for: request.entity), layout: layout, dialect: .sqlite)
        // With a window, count the window's rows; without one, count in the select itself.
        let windowed = request.limit > 0 || request.offset > 0
        let sql: SQLFragment = windowed
            ? "SELECT COUNT(*) FROM (\(try query.select("1", sorted: false)))"
            : try query.select("COUNT(*)", sorted: false)
        return try readers.read { db in
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            guard try statement.step() else { return 0 }
            return Int(statement.int64(at: 0))
        }
    }

    package func row(entity: EntityDescription, primaryKey: Int64) throws -> StoreRow? {
        // From the root, so that the row's own entity (a sub-entity) comes back.
        let root = entity.rootEntity
        let layout = try currentLayout()
        guard let sql = try layout.rowByKeyQuery(root, dialect: .sqlite) else {
            return try fetch(StoreFetchRequest(entity: root, predicate: .primaryKeyIn([primaryKey]))).first
        }
        return try rows((sql, [.integer(primaryKey)]), of: root, includingSubentities: true, mapping: try layout.mapping(for: root),
                        layout: layout, firstOnly: true).first
    }

    package func fetchRelated(_ relationship: RelationshipDescription, of primaryKeys: [Int64]) throws -> [(source: Int64, member: ManagedObjectID)] {
        let layout = try currentLayout()
        let target = try layout.storage(of: relationship).destination
        var result: [(source: Int64, member: ManagedObjectID)] = []
        let allowed = try layout.mapping(for: target).entityNumbers
        let checksEntity = !target.subentities.isEmpty || target.superentity != nil
        let keys = primaryKeys.sorted()
        for start in stride(from: 0, to: keys.count, by: 500) {
            var chunk = Array(keys[start..<min(start + 500, keys.count)])
            // Padded to a power of two (repeating a key changes nothing): ten statement shapes.
            var size = 1
            while size < chunk.count { size *= 2 }
            chunk += Array(repeating: chunk[chunk.count - 1], count: size - chunk.count)
            let query = try layout.relatedQuery(relationship, sources: chunk)
            try readers.read { db in
                let statement = try db.cachedStatement(query)
                defer { statement.reset() }
                while try statement.step() {
                    if checksEntity { try Self.checkRowEntity(statement.int64(at: 1), allowed: allowed, key: statement.int64(at: 0),
                                                              table: "the destination's table") }
                    let entity = target.subentities.isEmpty ? target : rowEntity(statement.int64(at: 1), requested: target, layout: layout)
                    result.append((statement.int64(at: 2), .permanent(entity, storeNumber: storeNumber, primaryKey: statement.int64(at: 0))))
                }
            }
        }
        return result
    }

    /// A row the query selected by its `Z_ENT` must say it is one of the entities asked for: when
    /// it does not, an index and its table disagree (a damaged file; found by the fuzzer), and the
    /// row would become an object of an entity nobody asked for.
    static func checkRowEntity(_ number: Int64, allowed: [Int], key: Int64, table: String) throws {
        guard !allowed.contains(Int(number)) else { return }
        throw CoreDataError(.persistentStoreInvalidType, """
            The row \(key) of \(table) was selected as one of the entities \(allowed) but says it is entity \
            \(number): the store file is damaged (its indexes disagree with its tables). Check it with PRAGMA \
            integrity_check and restore it from a backup.
            """)
    }
}
