import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    /// A dictionary fetch as one `SELECT … GROUP BY …` (`DictionaryQuery`); over the rows in
    /// Swift when SQL cannot answer it exactly.
    package func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.fetch.entity)
        let (condition, arguments) = try whereClause(request.fetch, mapping: mapping, layout: layout)
        guard let query = DictionaryQuery(request, mapping: mapping, condition: condition, arguments: arguments, dialect: .sqlite) else {
            return request.evaluate(try fetch(request.unwindowedFetch).map(\.snapshot.values))
        }
        let rows = try readers.read { db in
            let statement = try db.cachedStatement(query.sql)
            defer { statement.reset() }
            try statement.bind(query.arguments)
            var rows: [[ManagedValue]] = []
            while try statement.step() {
                rows.append(request.columns.enumerated().map { index, column in statement.value(at: Int32(index), type: column.type) })
            }
            return rows
        }
        return request.finish(rows, distinct: query.distinctInSwift, having: query.havingInSwift, window: query.windowInSwift)
    }
}
