import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    /// A dictionary fetch as one `SELECT … GROUP BY …` (`DictionaryQuery`); over the rows in
    /// Swift when SQL cannot answer it exactly (string operators included: PostgreSQL selects only
    /// a superset of their rows).
    package func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.fetch.entity)
        let selection = try FetchQuery(request.fetch, mapping: mapping, layout: layout, dialect: .postgreSQL)
        guard selection.isExact, let query = DictionaryQuery(request, mapping: mapping, condition: selection.condition, dialect: .postgreSQL) else {
            return request.evaluate(try fetch(request.unwindowedFetch).map(\.snapshot.values))
        }
        let cells = try read(onReplica: true) { try $0.execute(query.statement).rows }
        let rows = cells.map { row in request.columns.enumerated().map { index, column in Self.attributeValue(row[index], type: column.type) } }
        return request.finish(rows, distinct: query.distinctInSwift, having: query.havingInSwift, window: query.windowInSwift)
    }
}
