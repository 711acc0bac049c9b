import Foundation
import OpenCoreDataCore

extension ModelContext {
    /// The name saves of this context record as their author in the history; nil: none.
    public var author: String? {
        get { onQueue { managed.transactionAuthor } }
        set { onQueue { managed.transactionAuthor = newValue } }
    }

    /// The history transactions a descriptor describes, with their changes, in commit order
    /// unless the descriptor sorts them.
    ///
    /// ```swift
    /// let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > lastToken })
    /// for transaction in try context.fetchHistory(descriptor) {
    ///     for case .insert(let insert as DefaultHistoryInsert<Trip>) in transaction.changes { … }
    /// }
    /// ```
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        var transactions = try matching(descriptor)
        if !descriptor.sortBy.isEmpty { transactions.sort(using: descriptor.sortBy) }
        if let limit = descriptor.fetchLimit, limit > 0, transactions.count > limit { transactions = Array(transactions.prefix(limit)) }
        return transactions
    }

    /// Deletes the history transactions a descriptor describes. A store's history can only lose
    /// its oldest part: the transactions described must be older than every one kept
    /// (`#Predicate { $0.token <= token }`, `$0.timestamp < date`); otherwise this throws and
    /// deletes nothing.
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let all = try history(as: T.self)
        var count = 0
        for transaction in all {
            guard try descriptor.predicate?.evaluate(transaction) ?? true else { break }
            count += 1
        }
        if let limit = descriptor.fetchLimit, limit > 0 { count = min(count, limit) }
        let kept = all.dropFirst(count)
        if try kept.contains(where: { try descriptor.predicate?.evaluate($0) ?? true }), descriptor.fetchLimit ?? 0 == 0 {
            throw CoreDataError(.coreData, """
                The history descriptor describes transactions newer than ones it keeps; a store's history \
                can only lose its oldest transactions. Describe them by token or date \
                (#Predicate { $0.token <= token }).
                """)
        }
        guard count > 0, let last = all[count - 1] as? DefaultHistoryTransaction else { return }
        try onQueue { _ = try managed.execute(PersistentHistoryChangeRequest.deleteHistory(before: last.token.token)) }
    }

    /// The transactions a descriptor's predicate keeps, in commit order.
    private func matching<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        try history(as: T.self).filter { try descriptor.predicate?.evaluate($0) ?? true }
    }

    /// Every transaction of the container's store, in commit order, as `T`.
    private func history<T: HistoryTransaction>(as type: T.Type) throws -> [T] {
        guard T.self == DefaultHistoryTransaction.self else {
            throw CoreDataError(.coreData, "History is read as DefaultHistoryTransaction; \(T.self) is not a transaction type this store records.")
        }
        let transactions = try onQueue {
            try managed.execute(PersistentHistoryChangeRequest.fetchHistory(after: Optional<PersistentHistoryToken>.none)).transactions
        }
        return transactions.compactMap { historyTransaction($0) as? T }
    }

    private func historyTransaction(_ transaction: PersistentHistoryTransaction) -> DefaultHistoryTransaction {
        let changes = (transaction.changes ?? []).compactMap { change -> HistoryChange? in
            guard let type = container.modelTypes[change.changedObjectID.entity.name] else { return nil }
            return Self.historyChange(change, of: type)
        }
        return DefaultHistoryTransaction(changes: changes, transactionIdentifier: transaction.transactionNumber,
                                         token: DefaultHistoryToken(transaction.token), author: transaction.author,
                                         bundleIdentifier: transaction.bundleID ?? "", processIdentifier: transaction.processID ?? "",
                                         storeIdentifier: transaction.storeID, timestamp: transaction.timestamp)
    }

    private static func historyChange<Model: PersistentModel>(_ change: PersistentHistoryChange, of type: Model.Type) -> HistoryChange {
        let id = PersistentIdentifier(change.changedObjectID)
        switch change.changeType {
        case .insert:
            return .insert(DefaultHistoryInsert<Model>(changeIdentifier: change.changeID, changedPersistentIdentifier: id,
                                                       transactionIdentifier: change.transactionNumber))
        case .update:
            let names = change.updatedPropertyNames ?? []
            let keyPaths = Model.schemaMetadata.filter { names.contains($0.name) }.compactMap { $0.keypath as? PartialKeyPath<Model> }
            return .update(DefaultHistoryUpdate<Model>(changeIdentifier: change.changeID, changedPersistentIdentifier: id,
                                                       transactionIdentifier: change.transactionNumber, updatedAttributes: keyPaths))
        case .delete:
            return .delete(DefaultHistoryDelete<Model>(changeIdentifier: change.changeID, changedPersistentIdentifier: id,
                                                       transactionIdentifier: change.transactionNumber,
                                                       tombstone: HistoryTombstone(values: change.tombstone ?? [:])))
        }
    }
}
