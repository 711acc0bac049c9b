import Foundation

extension StoreEngine {
    /// Reads the history after `number` (and committed after `date`) a page of `size`
    /// transactions at a time, each page after the last transaction read, handing each to `body`
    /// until it returns `false` or the history ends (a page shorter than `size`): what a
    /// history fetch with a limit and a store copy read, never the whole history at once.
    package func forEachHistoryPage(after number: Int64?, date: Date?, size: Int, includingChanges: Bool,
                                    _ body: ([HistoryTransactionRecord]) throws -> Bool) throws {
        var after = number
        while true {
            let page = try fetchHistory(after: after, date: date, limit: size, includingChanges: includingChanges)
            guard let last = page.last, try body(page), page.count == size else { return }
            after = last.number
        }
    }
}
