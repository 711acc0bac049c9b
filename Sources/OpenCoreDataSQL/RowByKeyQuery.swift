import OpenCoreDataCore

/// A root entity and a dialect: the key of a cached "one row by its key" query.
struct RowQueryKey: Hashable {
    var root: ObjectIdentifier
    var dialect: SQLDialect
}

extension RelationalLayout {
    /// The query that reads one row of `root`'s table by its primary key with every column a
    /// fetch reads (`FetchQuery.rowColumns`), rendered for `dialect` with the key as its one bound
    /// value. Every fault a context fulfils from the store runs it; building and rendering it anew
    /// cost 17,000 instructions, three times SQLite's own work for the row. Made once per root
    /// entity and dialect (the layout keeps the entity, so its identity stays its own); `nil`
    /// when the rendered query does not take the key as its only value (the caller then builds it
    /// as any fetch).
    package func rowByKeyQuery(_ root: EntityDescription, dialect: SQLDialect) throws -> String? {
        let key = RowQueryKey(root: ObjectIdentifier(root), dialect: dialect)
        if let known = rowQueries.withLock({ $0[key] }) { return known }
        let marker: Int64 = 1
        let request = StoreFetchRequest(entity: root, predicate: .primaryKeyIn([marker]))
        let mapping = try mapping(for: root)
        let (sql, arguments) = try FetchQuery(request, mapping: mapping, layout: self, dialect: dialect)
            .select(FetchQuery.rowColumns(mapping)).rendered(for: dialect)
        guard arguments.count == 1, case .integer(marker) = arguments[0] else { return nil }
        rowQueries.withLock { $0[key] = sql }
        return sql
    }
}
