import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    /// A request as SQL. When `inSwift`, the SQL selects a superset of the rows in no particular
    /// window: string operators (which PostgreSQL cannot test with Core Data's Unicode rules) or
    /// sort comparators other than binary are applied in Swift, then the window.
    struct Selection {
        var query: FetchQuery
        var statement: SQLFragment
        var inSwift: Bool
    }

    /// `SELECT <columns> FROM <table> WHERE … ORDER BY … LIMIT … OFFSET …`; the order only when
    /// `sorted`, the window only when SQL selects exactly.
    func select(_ request: StoreFetchRequest, mapping: RelationalLayout.EntityMapping, layout: RelationalLayout, columns: SQLFragment,
                sorted: Bool = true) throws -> Selection {
        let query = try FetchQuery(request, mapping: mapping, layout: layout, dialect: .postgreSQL)
        let inSwift = !query.isExact || (sorted && Self.sortsInSwift(request))
        let statement = try query.select(columns, sorted: sorted && !inSwift, windowed: !inSwift)
        return Selection(query: query, statement: statement, inSwift: inSwift)
    }

    /// Whether the request's order is one SQL cannot give: a string compared other than by its
    /// bytes (PostgreSQL's collations are not Foundation's).
    static func sortsInSwift(_ request: StoreFetchRequest) -> Bool {
        request.sort.contains { $0.comparator != .binary && $0.attributeType(from: request.entity) == .string }
    }

    package func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let selection = try select(request, mapping: mapping, layout: layout, columns: FetchQuery.rowColumns(mapping))
        if selection.inSwift, request.limit > 0, !Self.sortsInSwift(request) {
            return try fetchWindowInChunks(request, superset: selection, mapping: mapping, layout: layout)
        }
        let cells = try read(onReplica: true) { try $0.execute(selection.statement).rows }
        let rows = try storeRows(cells, request: request, mapping: mapping, layout: layout)
        return selection.inSwift ? try finishInSwift(rows, request) : rows
    }

    /// The window of a request whose predicate SQL selects a superset of (string operators) but
    /// whose order SQL keeps: the superset in that order, a chunk at a time (each twice the last),
    /// tested in Swift until the window is full; all chunks in one snapshot. A limit of 10 over a
    /// large table reads a few chunks, not the table.
    private func fetchWindowInChunks(_ request: StoreFetchRequest, superset: Selection, mapping: RelationalLayout.EntityMapping,
                                     layout: RelationalLayout) throws -> [StoreRow] {
        let wanted = request.offset.addingSaturated(request.limit)
        let ordered = try superset.statement + superset.query.order(keyedWhenUnsorted: true)
        var unwindowed = request
        unwindowed.limit = 0
        unwindowed.offset = 0
        unwindowed.sort = []    // the chunks come in order
        return try read(inOneSnapshot: true, onReplica: true) { session in
            var matches: [StoreRow] = []
            var read = 0
            var chunk = min(max(100, wanted.addingSaturated(wanted)), 10_000)
            while matches.count < wanted {
                let cells = try session.execute(ordered + superset.query.window(limit: chunk, offset: read)).rows
                matches += try finishInSwift(try storeRows(cells, request: request, mapping: mapping, layout: layout), unwindowed)
                read += cells.count
                if cells.count < chunk { break }
                chunk = min(chunk * 2, 100_000)
            }
            let start = min(request.offset, matches.count)
            return Array(matches[start..<min(start.addingSaturated(request.limit), matches.count)])
        }
    }

    /// Fetched rows (`FetchQuery.rowColumns`) as store rows.
    func storeRows(_ cells: [[ManagedValue]], request: StoreFetchRequest, mapping: RelationalLayout.EntityMapping,
                           layout: RelationalLayout) throws -> [StoreRow] {
        let allowed = request.includesSubentities ? mapping.entityNumbers : Array(mapping.entityNumbers.prefix(1))
        var rows: [StoreRow] = []
        rows.reserveCapacity(cells.count)
        for row in cells {
            guard case .integer(let key) = row[0], case .integer(let number) = row[1], case .integer(let version) = row[2] else {
                throw CoreDataError(.persistentStoreInvalidType, """
                    A row of \(mapping.table) in the PostgreSQL store \(url.description) has no Z_PK, Z_ENT or \
                    Z_OPT. Was the table changed by hand?
                    """)
            }
            guard allowed.contains(Int(number)) else {
                throw CoreDataError(.persistentStoreInvalidType, """
                    The row \(key) of \(mapping.table) was selected as one of the entities \(allowed) but says \
                    it is entity \(number). Was the table changed by hand?
                    """)
            }
            var entity = request.entity
            if number != Int64(mapping.entityNumbers[0]), let own = layout.entitiesByNumber[Int(number)] { entity = own }
            let ownMapping = entity === request.entity ? mapping : try layout.mapping(for: entity)
            rows.append(StoreRow(entity: entity, primaryKey: key,
                                 snapshot: RowSnapshot(values: values(of: row, from: 3, mapping: ownMapping, layout: layout), version: version)))
        }
        return rows
    }

    /// The rows of a superset that match the request, in its order and window.
    func finishInSwift(_ candidates: [StoreRow], _ request: StoreFetchRequest) throws -> [StoreRow] {
        var rows = candidates
        let graph = StoreRowReader(engine: self)
        if let predicate = request.predicate {
            rows = rows.filter { row in
                let id = ManagedObjectID.permanent(row.entity, storeNumber: storeNumber, primaryKey: row.primaryKey)
                return predicate.evaluate(EvaluationSubject(values: request.entity.adapt(row.snapshot.values, from: row.entity),
                                                            primaryKey: row.primaryKey, id: id, graph: graph))
            }
        }
        rows = StoreSortKey.sorted(rows, of: request.entity, by: request.sort, storeNumber: storeNumber, graph: graph)
        if let error = graph.error { throw error }
        let start = min(request.offset, rows.count)
        let end = request.limit > 0 ? min(start.addingSaturated(request.limit), rows.count) : rows.count
        return Array(rows[start..<end])
    }

    package func fetchKeys(_ request: StoreFetchRequest) throws -> [Int64] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let selection = try select(request, mapping: mapping, layout: layout, columns: "Z_PK")
        if selection.inSwift { return try fetch(request).map(\.primaryKey) }
        return try read(onReplica: true) { try $0.integers(selection.statement) }
    }

    package func count(_ request: StoreFetchRequest) throws -> Int {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.entity)
        let windowed = request.limit > 0 || request.offset > 0
        let selection = try select(request, mapping: mapping, layout: layout, columns: windowed ? "1" : "COUNT(*)", sorted: false)
        if selection.inSwift { return try fetch(request).count }
        let statement: SQLFragment = windowed ? "SELECT COUNT(*) FROM (\(selection.statement)) AS window_rows" : selection.statement
        let rows = try read(onReplica: true) { try $0.execute(statement).rows }
        guard case .integer(let count)? = rows.first?.first else { return 0 }
        return Int(count)
    }

    package func row(entity: EntityDescription, primaryKey: Int64) throws -> StoreRow? {
        // From the root, so that the row's own entity (a sub-entity) comes back.
        let request = StoreFetchRequest(entity: entity.rootEntity, predicate: .primaryKeyIn([primaryKey]))
        let layout = try currentLayout()
        guard let sql = try layout.rowByKeyQuery(request.entity, dialect: .postgreSQL) else { return try fetch(request).first }
        let cells = try read(onReplica: true) { try $0.execute(rendered: sql, arguments: [.integer(primaryKey)]).rows }
        return try storeRows(cells, request: request, mapping: try layout.mapping(for: request.entity), layout: layout).first
    }

    package func fetchRelated(_ relationship: RelationshipDescription, of primaryKeys: [Int64]) throws -> [(source: Int64, member: ManagedObjectID)] {
        let layout = try currentLayout()
        let target = try layout.storage(of: relationship).destination
        let allowed = try layout.mapping(for: target).entityNumbers
        let keys = primaryKeys.sorted()
        var result: [(source: Int64, member: ManagedObjectID)] = []
        for start in stride(from: 0, to: keys.count, by: 1000) {
            let chunk = keys[start..<min(start + 1000, keys.count)]
            let query = try layout.relatedQuery(relationship, sources: Array(chunk))
            let rows = try read { try $0.execute(query).rows }
            for row in rows {
                guard case .integer(let key) = row[0], case .integer(let number) = row[1], case .integer(let source) = row[2] else { continue }
                guard allowed.contains(Int(number)) else {
                    throw CoreDataError(.persistentStoreInvalidType, """
                        The row \(key) of the destination's table says it is entity \(number), not one of \
                        \(allowed). Was the table changed by hand?
                        """)
                }
                let entity = target.subentities.isEmpty ? target : layout.entitiesByNumber[Int(number)] ?? target
                result.append((source, .permanent(entity, storeNumber: storeNumber, primaryKey: key)))
            }
        }
        return result
    }
}
