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
// @unchecked Sendable: configured (resultType, affectedStores) before it is executed, like every Core Data
// request; executing only reads it.
public final class PersistentHistoryChangeRequest: @unchecked Sendable {
    /// What the result holds. Raw values are Core Data's `NSPersistentHistoryResultType`.
    public enum ResultType: Int, Sendable {
        /// `true`.
        case statusOnly = 0
        /// The changed objects' IDs, `[ManagedObjectID]`.
        case objectIDs = 1
        /// How many transactions (fetch) or how many were deleted (delete).
        case count = 2
        /// `[PersistentHistoryTransaction]` without their changes.
        case transactionsOnly = 3
        /// `[PersistentHistoryChange]`.
        case changesOnly = 4
        /// `[PersistentHistoryTransaction]` with their changes (the default).
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
    /// The stores whose history is read or deleted (`nil`: every store that records history).
    /// Mirrors `affectedStores`.
    public var affectedStores: [PersistentStore]?
    /// Which transactions (or changes) of those after the bound to keep: a request on
    /// ``PersistentHistoryTransaction/entityDescription`` or
    /// ``PersistentHistoryChange/entityDescription`` with a predicate and a `fetchLimit`, as Apple's
    /// samples set it (`changeRequest.fetchRequest = NSPersistentHistoryTransaction.fetchRequest`
    /// with a predicate on `author`). Mirrors `fetchRequest`.
    public var fetchRequest: FetchRequest<ManagedObject>?
    /// The filter `fetchRequest` stands for.
    package var filter: HistoryFilter? {
        fetchRequest.map { HistoryFilter(entityName: $0.entity?.name ?? $0.entityName ?? "", predicate: $0.predicate, limit: $0.fetchLimit) }
    }

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

extension PersistentHistoryChangeRequest {
    /// The transactions (or changes) a fetch request selects: its entity is
    /// ``PersistentHistoryTransaction/entityDescription`` (keys `author`, `bundleID`,
    /// `contextName`, `processID`, `timestamp`, `transactionNumber`) or
    /// ``PersistentHistoryChange/entityDescription`` (keys `changeType`, `changedEntity` — the
    /// entity's name — and `changeID`); its predicate filters them, its `fetchLimit` bounds the
    /// transactions. Mirrors `fetchHistory(withFetchRequest:)`.
    public static func fetchHistory(withFetchRequest request: FetchRequest<ManagedObject>) -> PersistentHistoryChangeRequest {
        let result = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        result.fetchRequest = request
        return result
    }
}

/// A fetch request's filter over history (see `fetchHistory(withFetchRequest:)`).
package struct HistoryFilter: @unchecked Sendable {
    // @unchecked Sendable: the predicate is an immutable value once the request is made.
    package var entityName: String
    package var predicate: FetchPredicate?
    package var limit: Int

    /// The transactions the filter keeps (a change filter keeps the matching changes of each).
    package func apply(to transactions: [PersistentHistoryTransaction]) throws(CoreDataError) -> [PersistentHistoryTransaction] {
        var kept: [PersistentHistoryTransaction] = []
        switch entityName {
        case PersistentHistoryTransaction.entityDescription.name:
            let bound = try predicate?.bind(to: PersistentHistoryTransaction.entityDescription)
            kept = transactions.filter { bound?.evaluate($0.filterValues, primaryKey: $0.transactionNumber) ?? true }
        case PersistentHistoryChange.entityDescription.name:
            let bound = try predicate?.bind(to: PersistentHistoryChange.entityDescription)
            for transaction in transactions {
                let changes = (transaction.changes ?? []).filter { bound?.evaluate($0.filterValues, primaryKey: $0.changeID) ?? true }
                if !changes.isEmpty { kept.append(transaction.with(changes: changes)) }
            }
        default:
            throw CoreDataError(.coreData, """
                fetchHistory(withFetchRequest:) needs a request for \
                PersistentHistoryTransaction.entityDescription or PersistentHistoryChange.entityDescription, \
                not '\(entityName)'.
                """)
        }
        return limit > 0 ? Array(kept.prefix(limit)) : kept
    }
}

/// The entities history fetch requests are written against (a model of their own).
private let historyModel: ManagedObjectModel = {
    let transaction = EntityDescription(name: "Transaction", properties: [
        AttributeDescription(name: "author", type: .string),
        AttributeDescription(name: "bundleID", type: .string),
        AttributeDescription(name: "contextName", type: .string),
        AttributeDescription(name: "processID", type: .string),
        AttributeDescription(name: "timestamp", type: .date),
        AttributeDescription(name: "transactionNumber", type: .integer64),
    ])
    let change = EntityDescription(name: "Change", properties: [
        AttributeDescription(name: "changeType", type: .integer16),
        AttributeDescription(name: "changedEntity", type: .string),
        AttributeDescription(name: "changeID", type: .integer64),
    ])
    let model = ManagedObjectModel(entities: [transaction, change])
    try? model.freeze()
    return model
}()

/// A fetch request on one of the history entities.
private func historyFetchRequest(_ entity: EntityDescription) -> FetchRequest<ManagedObject> {
    let request = FetchRequest<ManagedObject>(entityName: entity.name)
    request.entity = entity
    return request
}

extension PersistentHistoryTransaction {
    /// The entity of history transactions, for `fetchHistory(withFetchRequest:)`. Mirrors
    /// `NSPersistentHistoryTransaction.entityDescription`.
    public static var entityDescription: EntityDescription { historyModel.entities[0] }

    /// A fetch request for transactions: set its predicate (`author == "importer"`, …). Optional,
    /// as Core Data declares it (`if let request = NSPersistentHistoryTransaction.fetchRequest`);
    /// never `nil`. Mirrors `NSPersistentHistoryTransaction.fetchRequest`.
    public static var fetchRequest: FetchRequest<ManagedObject>? { historyFetchRequest(entityDescription) }

    /// The values in the slot order of `entityDescription`.
    var filterValues: [ManagedValue] {
        [author.map { .string($0) } ?? .null, bundleID.map { .string($0) } ?? .null, contextName.map { .string($0) } ?? .null,
         processID.map { .string($0) } ?? .null, .date(timestamp), .integer(transactionNumber)]
    }

    func with(changes: [PersistentHistoryChange]) -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(token: token, timestamp: timestamp, author: author, contextName: contextName, processID: processID,
                                     bundleID: bundleID, changes: changes)
    }
}

extension PersistentHistoryChange {
    /// The entity of history changes, for `fetchHistory(withFetchRequest:)`. Mirrors
    /// `NSPersistentHistoryChange.entityDescription`.
    public static var entityDescription: EntityDescription { historyModel.entities[1] }

    /// A fetch request for changes: set its predicate (`changedEntity == "Quake"`, …). Optional,
    /// as Core Data declares it; never `nil`. Mirrors `NSPersistentHistoryChange.fetchRequest`.
    public static var fetchRequest: FetchRequest<ManagedObject>? { historyFetchRequest(entityDescription) }

    /// The values in the slot order of `entityDescription`.
    var filterValues: [ManagedValue] {
        [.integer(Int64(changeType.rawValue)), .string(changedObjectID.entity.name), .integer(changeID)]
    }
}
