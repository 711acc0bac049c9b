import OpenCoreDataCore

/// A dictionary fetch (`StoreDictionaryRequest`) as one `SELECT`, for both SQL stores: the
/// projection, `GROUP BY` and aggregates, order and window run in the database, so no object and
/// no row beyond the results is read. What SQL leaves (a `having` condition, distinct groups, the
/// window after them) the store finishes with `StoreDictionaryRequest.finish`.
///
/// The results are those of `StoreDictionaryRequest.evaluate`, order included: rows (and
/// distinct rows) in the request's order with ties by first row (`MIN(Z_PK)`), groups likewise;
/// the sum of no rows is 0. A request SQL cannot answer exactly so (decimals, which SQLite keeps as
/// text; sums of non-numbers; strings ordered by a non-binary comparator; an order by values
/// that are not in the results) has no query: the store evaluates it over its rows.
package struct DictionaryQuery {
    /// The statement, its values bound in it.
    package var statement: SQLFragment
    /// The steps left to `StoreDictionaryRequest.finish`.
    package var distinctInSwift: Bool
    package var havingInSwift: Bool
    package var windowInSwift: Bool

    /// The query for `request` on `mapping`'s table, whose rows `condition` (` WHERE …` or empty)
    /// selects; nil when SQL cannot answer it exactly.
    package init?(_ request: StoreDictionaryRequest, mapping: RelationalLayout.EntityMapping, condition: SQLFragment, dialect: SQLDialect) {
        let types = mapping.types
        guard !request.columns.isEmpty else { return nil }     // no column to select: Swift's empty rows
        for column in request.columns {
            guard Self.supports(column.function, on: types[column.slot]) else { return nil }
        }
        // Distinct rows are the groups of all their values (NULLs one group, as in a Set).
        let grouping = request.aggregates ? request.groupBy : (request.distinct ? request.columns.map(\.slot) : [])
        let grouped = request.aggregates || request.distinct
        guard grouping.allSatisfy({ types[$0] != .decimal }) else { return nil }
        // Aggregates over all rows give one row: no order to keep.
        let sort = request.aggregates && request.groupBy.isEmpty ? [] : request.fetch.sort
        for key in sort {
            // Keys through relationships are ordered by the rows' fetch, in Swift's evaluation.
            if !key.path.isEmpty { return nil }
            if types[key.slot] == .string && key.comparator != .binary { return nil }
            if types[key.slot] == .decimal { return nil }
            // A group's order is by values every row of it shares.
            if grouped && !grouping.contains(key.slot) { return nil }
        }
        let columns = mapping.columns
        let selected = request.columns.map { column -> SQLFragment in
            let name: SQLFragment = "\(identifier: columns[column.slot])"
            switch column.function {
            case nil: return name
            case .count: return "COUNT(\(name))"
            case .sum: return column.type == .integer64 ? "CAST(COALESCE(SUM(\(name)), 0) AS BIGINT)" : dialect.total(name)
            case .average: return dialect.average(dialect.real(name))
            case .minimum: return "MIN(\(name))"
            case .maximum: return "MAX(\(name))"
            }
        }
        var sql: SQLFragment = "SELECT \(SQLFragment.joined(selected, separator: ", ")) FROM \(identifier: mapping.table)\(condition)"
        if !grouping.isEmpty {
            var seen = Set<Int>()
            let names = grouping.filter { seen.insert($0).inserted }.map { SQLFragment("\(identifier: columns[$0])") }
            sql += " GROUP BY \(SQLFragment.joined(names, separator: ", "))"
        }
        let order = sort.map { dialect.order("\(identifier: columns[$0.slot])", ascending: $0.ascending) }
        if grouped {
            // Ties (and groups without an order) by their first row, as `evaluate` meets them.
            if !grouping.isEmpty { sql += " ORDER BY \(SQLFragment.joined(order + ["MIN(Z_PK)"], separator: ", "))" }
        } else if !order.isEmpty {
            sql += " ORDER BY \(SQLFragment.joined(order + ["Z_PK"], separator: ", "))"
        }
        havingInSwift = request.having != nil
        distinctInSwift = request.distinct && request.aggregates
        windowInSwift = havingInSwift || distinctInSwift
        if !windowInSwift, request.fetch.limit > 0 || request.fetch.offset > 0 {
            let limit = request.fetch.limit > 0 ? Int64(request.fetch.limit) : (dialect == .sqlite ? -1 : Int64.max)
            sql += " LIMIT \(bind: .integer(limit)) OFFSET \(bind: .integer(Int64(request.fetch.offset)))"
        }
        statement = sql
    }

    /// Whether SQL computes `function` of a column of `type` as `evaluate` does.
    private static func supports(_ function: StoreDictionaryRequest.Function?, on type: AttributeType) -> Bool {
        switch function {
        case nil: type != .decimal
        case .count: true
        case .sum, .average: type.isInteger || type == .double || type == .float
        case .minimum, .maximum: type.isInteger || type == .boolean || type == .double || type == .float || type == .date || type == .string
        }
    }
}
