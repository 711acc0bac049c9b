import Foundation

/// Fetches or deletes persistent history: `context.execute(request)`. Mirrors
/// `NSPersistentHistoryChangeRequest`.
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let transactions = try context.execute(request).transactions
/// viewContext.mergeChanges(fromHistory: transactions)
/// lastToken = transactions.last?.token ?? lastToken
/// ```
// @unchecked Sendable: configured (resultType) before it is executed, like every Core Data
// request; executing only reads it.
public final class PersistentHistoryChangeRequest: @unchecked Sendable {
    /// What the result holds. Raw values are Core Data's `NSPersistentHistoryResultType`.
    public enum ResultType: Int, Sendable {
        case statusOnly = 0
        case objectIDs = 1
        case count = 2
        case transactionsOnly = 3
        case changesOnly = 4
        case transactionsAndChanges = 5
    }

    package enum Bound: Sendable {
        case token(PersistentHistoryToken?)
        case date(Date)
    }

    package let bound: Bound
    package let isDelete: Bool
    /// What the result holds (transactions and changes by default).
    public var resultType: ResultType = .transactionsAndChanges

    private init(bound: Bound, isDelete: Bool) {
        self.bound = bound
        self.isDelete = isDelete
    }

    /// The transactions after a token (all of them for `nil`).
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(bound: .token(token), isDelete: false)
    }

    /// The transactions committed after a date.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(bound: .date(date), isDelete: false)
    }

    /// The transactions after a transaction (all of them for `nil`).
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        fetchHistory(after: transaction?.token)
    }

    /// Deletes the transactions up to and including a token's.
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(bound: .token(token), isDelete: true)
    }

    /// Deletes the transactions committed before a date.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(bound: .date(date), isDelete: true)
    }

    /// Deletes the transactions up to and including a transaction.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        deleteHistory(before: transaction?.token)
    }
}

/// What executing a ``PersistentHistoryChangeRequest`` returns. Mirrors `NSPersistentHistoryResult`.
public final class PersistentHistoryResult: PersistentStoreResult, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `result` holds Sendable values (transactions,
    // changes, IDs, numbers).

    /// The transactions fetched (empty for deletes and for other result types).
    public let transactions: [PersistentHistoryTransaction]

    package init(result: Any?, transactions: [PersistentHistoryTransaction]) {
        self.transactions = transactions
        super.init(result: result)
    }
}
