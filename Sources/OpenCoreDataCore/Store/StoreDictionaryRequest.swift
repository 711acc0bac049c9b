import Foundation

/// A dictionary fetch as a store sees it: the rows a fetch selects, projected onto columns
/// (attributes, or aggregates of them), grouped, made distinct, filtered by `having`, ordered and
/// windowed. Like Core Data's dictionary results it reads what the store holds: a context's unsaved
/// changes do not count.
///
/// SQL stores run it as one `SELECT … GROUP BY …` where they can (`DictionaryQuery`); every store can
/// run it over its rows in Swift (``evaluate(_:)``), which defines the results both must give.
package struct StoreDictionaryRequest: Sendable {
    /// An aggregate of a column over a group.
    package enum Function: String, Sendable {
        case count = "count:", sum = "sum:", average = "average:", minimum = "min:", maximum = "max:"
    }

    /// One column of the results: an attribute's value (the same in every row of a group) or an
    /// aggregate of it; `type` is the result's type.
    package struct Column: Sendable {
        package var slot: Int
        package var function: Function?
        package var type: AttributeType

        package init(slot: Int, function: Function?, type: AttributeType) {
            self.slot = slot
            self.function = function
            self.type = type
        }
    }

    /// Entity, predicate, order (by the entity's slots) and window; `fetch.limit` and
    /// `fetch.offset` apply to the result rows, not to the rows read.
    package var fetch: StoreFetchRequest
    package var columns: [Column]
    /// The slots rows are grouped by (empty: no grouping; with aggregates, one group of all rows).
    package var groupBy: [Int]
    package var distinct: Bool
    /// A condition on result rows, bound to an entity whose slots are `columns`.
    package var having: BoundPredicate?

    package init(fetch: StoreFetchRequest, columns: [Column], groupBy: [Int], distinct: Bool, having: BoundPredicate?) {
        self.fetch = fetch
        self.columns = columns
        self.groupBy = groupBy
        self.distinct = distinct
        self.having = having
    }

    /// Whether rows are grouped (explicitly, or into one group by an aggregate).
    package var aggregates: Bool { !groupBy.isEmpty || columns.contains { $0.function != nil } }

    /// The read of the rows this request starts from: every matching row, in the request's order.
    package var unwindowedFetch: StoreFetchRequest {
        var request = fetch
        request.limit = 0
        request.offset = 0
        return request
    }

    /// The results over `rows` (the values of every row `unwindowedFetch` selects, in its order):
    /// groups in the order of their first row; without grouping, aggregates give one row even
    /// when no row matched (a count of 0), as SQL's aggregates do.
    package func evaluate(_ rows: [[ManagedValue]]) -> [[ManagedValue]] {
        var results: [[ManagedValue]]
        if aggregates {
            var groups: [[ManagedValue]: [[ManagedValue]]] = [:]
            var order: [[ManagedValue]] = []
            for row in rows {
                let key = groupBy.map { row[$0] }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(row)
            }
            if groupBy.isEmpty && order.isEmpty { order = [[]] }
            results = order.map { key in columns.map { Self.aggregate($0, over: groups[key] ?? []) } }
        } else {
            results = rows.map { row in columns.map { row[$0.slot] } }
        }
        return finish(results, distinct: distinct, having: true, window: true)
    }

    /// The steps after grouping that were not done in SQL: distinct, having, then the window.
    package func finish(_ rows: [[ManagedValue]], distinct: Bool, having: Bool, window: Bool) -> [[ManagedValue]] {
        var rows = rows
        if distinct {
            var seen = Set<[ManagedValue]>()
            rows = rows.filter { seen.insert($0).inserted }
        }
        if having, let condition = self.having { rows = rows.filter { condition.evaluate($0, primaryKey: nil) } }
        if window {
            if fetch.offset > 0 { rows = Array(rows.dropFirst(fetch.offset)) }
            if fetch.limit > 0 { rows = Array(rows.prefix(fetch.limit)) }
        }
        return rows
    }

    private static func aggregate(_ column: Column, over rows: [[ManagedValue]]) -> ManagedValue {
        let values = rows.map { $0[column.slot] }
        guard let function = column.function else { return values.first ?? .null }
        let present = values.filter { !$0.isNull }
        switch function {
        case .count:
            return .integer(Int64(present.count))
        case .minimum:
            return present.min { ManagedValue.compare($0, $1) == .orderedAscending } ?? .null
        case .maximum:
            return present.max { ManagedValue.compare($0, $1) == .orderedAscending } ?? .null
        case .sum:
            switch column.type {
            case .integer64:
                return .integer(present.reduce(0) { total, value in
                    switch value {
                    case .integer(let v): total &+ v
                    case .bool(let v): total &+ (v ? 1 : 0)
                    default: total
                    }
                })
            case .decimal: return .decimal(present.reduce(Decimal(0)) { total, value in if case .decimal(let v) = value { return total + v }; return total })
            default: return .double(present.reduce(0) { $0 + ($1.numericValue ?? 0) })
            }
        case .average:
            guard !present.isEmpty else { return .null }
            return .double(present.reduce(0) { $0 + ($1.numericValue ?? 0) } / Double(present.count))
        }
    }
}

extension StoreEngine {
    package func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]] {
        request.evaluate(try fetch(request.unwindowedFetch).map(\.snapshot.values))
    }
}
