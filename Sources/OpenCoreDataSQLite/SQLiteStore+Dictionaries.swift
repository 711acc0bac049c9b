import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    /// A dictionary fetch as one `SELECT … GROUP BY …` (`DictionaryQuery`); over the rows in
    /// Swift when SQL cannot answer it exactly.
    package func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]] {
        let layout = try currentLayout()
        let mapping = try layout.mapping(for: request.fetch.entity)
        let condition = try FetchQuery(request.fetch, mapping: mapping, layout: layout, dialect: .sqlite).condition
        guard let query = DictionaryQuery(request, mapping: mapping, condition: condition, dialect: .sqlite) else {
            return request.evaluate(try fetch(request.unwindowedFetch).map(\.snapshot.values))
        }
        let rows = try readers.read { db in
            let statement = try db.cachedStatement(query.statement)
            defer { statement.reset() }
            var rows: [[ManagedValue]] = []
            while try statement.step() {
                rows.append(request.columns.enumerated().map { index, column in statement.value(at: Int32(index), type: column.type) })
            }
            return rows
        }
        return request.finish(rows, distinct: query.distinctInSwift, having: query.havingInSwift, window: query.windowInSwift)
    }
}
