import OpenCoreDataCore

/// A fetch request as SQL, once for both SQL stores: which rows (`WHERE`), in which order
/// (`ORDER BY`) and which window (`LIMIT` / `OFFSET`), as ``SQLFragment``s.
package struct FetchQuery {
    /// ` WHERE …` for the request's entity (and sub-entities) and predicate, or empty.
    package var condition: SQLFragment
    /// Whether ``condition`` selects exactly the matching rows: false when the dialect cannot
    /// test a string operator and the condition selects a superset (see `SQLCompiler`), which
    /// the store then tests in Swift.
    package var isExact: Bool

    private let request: StoreFetchRequest
    private let mapping: RelationalLayout.EntityMapping
    private let layout: RelationalLayout
    private let dialect: SQLDialect

    /// The query of `request` on `mapping`'s table.
    package init(_ request: StoreFetchRequest, mapping: RelationalLayout.EntityMapping, layout: RelationalLayout, dialect: SQLDialect) throws {
        self.request = request
        self.mapping = mapping
        self.layout = layout
        self.dialect = dialect
        var conditions: [SQLFragment] = []
        if mapping.hasSubentities || request.entity.superentity != nil {
            let numbers = request.includesSubentities ? mapping.entityNumbers : [mapping.entityNumbers[0]]
            conditions.append("Z_ENT IN (\(SQLFragment.numbers(numbers)))")
        }
        isExact = true
        if let predicate = request.predicate {
            var compiler = SQLCompiler(layout: layout, mapping: mapping, dialect: dialect)
            conditions.append(try compiler.condition(predicate))
            isExact = compiler.isExact
        }
        condition = conditions.isEmpty ? SQLFragment() : " WHERE \(SQLFragment.joined(conditions, separator: " AND "))"
    }

    /// ` ORDER BY …` for the request's sort keys, ties by key; without sort keys empty, or
    /// `ORDER BY Z_PK` when `keyedWhenUnsorted` (pages of one result read by `LIMIT`/`OFFSET` need
    /// an order to be pages of one sequence). Strings compared other than by their bytes get the
    /// comparator's collation on SQLite (which has Foundation's comparisons registered); other
    /// dialects order those in Swift.
    package func order(keyedWhenUnsorted: Bool = false) throws -> SQLFragment {
        guard !request.sort.isEmpty else { return keyedWhenUnsorted ? " ORDER BY Z_PK" : SQLFragment() }
        var compiler = SQLCompiler(layout: layout, mapping: mapping, dialect: dialect)
        var terms: [SQLFragment] = []
        for key in request.sort {
            var value = try compiler.sortValue(key)
            if dialect == .sqlite, key.comparator != .binary, key.attributeType(from: request.entity) == .string {
                value += " COLLATE \(identifier: key.comparator.collationName)"
            }
            terms.append(dialect.order(value, ascending: key.ascending))
        }
        return " ORDER BY \(SQLFragment.joined(terms + ["Z_PK"], separator: ", "))"
    }

    /// ` LIMIT … OFFSET …` for the request's window, or empty.
    package var window: SQLFragment {
        window(limit: request.limit, offset: request.offset)
    }

    /// ` LIMIT … OFFSET …` for a window, or empty (`limit` 0: no limit).
    package func window(limit: Int, offset: Int) -> SQLFragment {
        guard limit > 0 || offset > 0 else { return SQLFragment() }
        var window = SQLFragment()
        // SQLite needs a LIMIT before an OFFSET (-1: none).
        if limit > 0 || dialect == .sqlite { window += " LIMIT \(bind: .integer(limit > 0 ? Int64(limit) : -1))" }
        return window + " OFFSET \(bind: .integer(Int64(offset)))"
    }

    /// The columns a fetch of rows reads: `Z_PK, Z_ENT, Z_OPT`, then the table's columns
    /// (`mapping.tableColumns`).
    package static func rowColumns(_ mapping: RelationalLayout.EntityMapping) -> SQLFragment {
        mapping.rowColumns
    }

    /// `SELECT <columns> FROM <table> WHERE … [ORDER BY …] [LIMIT … OFFSET …]`.
    package func select(_ columns: SQLFragment, sorted: Bool = true, windowed: Bool = true) throws -> SQLFragment {
        var sql: SQLFragment = "SELECT \(columns) FROM \(identifier: mapping.table)\(condition)"
        if sorted { sql += try order() }
        if windowed { sql += window }
        return sql
    }
}
