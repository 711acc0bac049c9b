import Foundation

extension ManagedObjectContext {
    /// Fetches or deletes persistent history of the coordinator's stores (those opened with
    /// `NSPersistentHistoryTrackingKey`). Throws 134301 when a token refers to deleted history.
    /// Mirrors `execute(_:)` with an `NSPersistentHistoryChangeRequest`.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        checkQueue("execute(_:)")
        let coordinator = try requireCoordinator()
        var transactions: [PersistentHistoryTransaction] = []
        var deleted = 0
        let affected = request.affectedStores?.map(\.identifier)
        do {
            for store in coordinator.persistentStores where store.engine.tracksHistory && affected?.contains(store.identifier) != false {
                let number: Int64?
                let date: Date?
                switch request.bound {
                case .token(let token):
                    // A token reads the stores it names, each after its own position.
                    if let token, token.transactionNumbers[store.identifier] == nil { continue }
                    (number, date) = (token?.transactionNumbers[store.identifier], nil)
                case .date(let bound):
                    (number, date) = (nil, bound)
                }
                if request.isDelete {
                    deleted += try store.engine.deleteHistory(through: number, before: date)
                    continue
                }
                let includeChanges = request.resultType != .transactionsOnly && request.resultType != .count && request.resultType != .statusOnly
                if let filter = request.filter, filter.limit > 0 {
                    // Only as many as the limit asks for, read page by page (an app far behind
                    // does not load the whole history to take the first few).
                    let wanted = filter.limit - transactions.count
                    if wanted > 0 { transactions += try history(of: store, after: number, date: date, includingChanges: includeChanges,
                                                                filter: filter, wanted: wanted) }
                    continue
                }
                let records = try store.engine.fetchHistory(after: number, date: date, limit: 0, includingChanges: includeChanges)
                transactions += records.map { record in transaction(from: record, store: store, includeChanges: includeChanges) }
            }
        } catch {
            throw PersistentStoreCoordinator.wrap(error)
        }
        if request.isDelete { return PersistentHistoryResult(result: request.resultType == .count ? deleted : true, transactions: []) }
        if let filter = request.filter { transactions = try filter.apply(to: transactions) }
        let result: Any = switch request.resultType {
        case .statusOnly: true
        case .count: transactions.count
        case .objectIDs: transactions.flatMap { $0.changes ?? [] }.map(\.changedObjectID)
        case .changesOnly: transactions.flatMap { $0.changes ?? [] }
        case .transactionsOnly, .transactionsAndChanges: transactions
        }
        return PersistentHistoryResult(result: result, transactions: request.resultType == .changesOnly ? [] : transactions)
    }

    /// The first `wanted` transactions of a store that `filter` keeps, after `number` and `date`:
    /// read in pages of at least 256 transactions, each after the last one read, until enough
    /// are kept or the history ends.
    private func history(of store: PersistentStore, after number: Int64?, date: Date?, includingChanges: Bool,
                         filter: HistoryFilter, wanted: Int) throws -> [PersistentHistoryTransaction] {
        var kept: [PersistentHistoryTransaction] = []
        try store.engine.forEachHistoryPage(after: number, date: date, size: max(wanted, 256), includingChanges: includingChanges) { records in
            kept += try filter.apply(to: records.map { transaction(from: $0, store: store, includeChanges: includingChanges) })
            return kept.count < wanted
        }
        return Array(kept.prefix(wanted))
    }

    private func transaction(from record: HistoryTransactionRecord, store: PersistentStore, includeChanges: Bool) -> PersistentHistoryTransaction {
        let number = store.number
        let changes = includeChanges ? record.changes.map { change in
            PersistentHistoryChange(
                changeID: change.changeID, changeType: PersistentHistoryChange.ChangeType(rawValue: change.changeType) ?? .update,
                changedObjectID: .permanent(modelEntity(for: change.entity), storeNumber: number, primaryKey: change.primaryKey),
                updatedPropertyNames: change.updatedNames, tombstone: change.tombstone, transactionNumber: record.number)
        } : nil
        return PersistentHistoryTransaction(
            token: PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: record.number), timestamp: record.timestamp,
            author: record.author, contextName: record.contextName, processID: record.processID, bundleID: record.bundleID, changes: changes)
    }

    /// Merges any number of history transactions in one pass: their net effect (an object
    /// inserted and deleted in between is only deleted) is merged as one save would be, on this
    /// context's queue. Faster than merging each transaction's `objectIDNotification()`, which
    /// refreshes an object once per transaction that touched it.
    public func mergeChanges(fromHistory transactions: [PersistentHistoryTransaction]) {
        checkQueue("mergeChanges(fromHistory:)")
        guard !transactions.isEmpty else { return }
        var event = PersistentHistoryTransaction.merged(transactions)
        event.readsFreshRows = true
        merge(event)
    }
}
