public import Foundation

/// Which history transactions to fetch or delete (SwiftData's `HistoryDescriptor`).
///
/// ```swift
/// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > lastToken })
/// for transaction in try context.fetchHistory(descriptor) { … }
/// ```
/// The predicate is evaluated on each transaction in memory (history transactions are not
/// models).
public struct HistoryDescriptor<HistoryTransactionType: HistoryTransaction> {
    /// Which transactions (nil: all).
    public var predicate: Predicate<HistoryTransactionType>?
    /// Their order (commit order when empty).
    public var sortBy: [SortDescriptor<HistoryTransactionType>] = []
    /// At most this many (nil or 0: no limit).
    public var fetchLimit: Int?

    /// A descriptor of the transactions matching `predicate`.
    public init(predicate: Predicate<HistoryTransactionType>? = nil) {
        self.predicate = predicate
    }
}
