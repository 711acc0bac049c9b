/// What a store engine does inside the write transaction of a save: conditional writes of rows,
/// reads of rows as the transaction sees them, and the writes that cannot conflict. The engine
/// opens the transaction, hands this to ``StoreSaveRules/apply(_:to:recordingHistory:beforeCommit:)``
/// and commits only when it answers ``StoreSaveOutcome/committed`` (rolling back otherwise, or
/// when it throws).
package protocol StoreSaveTransaction {
    /// Writes the update's slots and sets the row's version to `expectedVersion + 1`, only when
    /// the row still has `expectedVersion`; `false` (nothing written) when it has another version
    /// or is gone.
    mutating func write(_ update: StoreSaveRequest.Update) throws -> Bool
    /// Writes each update as `write(_:)` does; whether each was written, in their order. An
    /// engine that can write many rows in one statement does (the default writes one by one).
    mutating func write(_ updates: [StoreSaveRequest.Update]) throws -> [Bool]
    /// Deletes the row only when it still has `expectedVersion`; `false` (nothing deleted) when it
    /// has another version or is gone.
    mutating func remove(_ delete: StoreSaveRequest.Delete) throws -> Bool
    /// Deletes each row as `remove(_:)` does; whether each was deleted, in their order (the
    /// default deletes one by one).
    mutating func remove(_ deletes: [StoreSaveRequest.Delete]) throws -> [Bool]
    /// The row as the transaction sees it now, or `nil` when it is gone.
    mutating func currentRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot?
    /// Adds new rows (version 1) under the keys the request gives.
    mutating func insert(_ inserts: [StoreSaveRequest.Insert]) throws
    /// Adds and removes many-to-many pairs (idempotent: both sides of a pair may report it).
    mutating func writeJoins(_ joins: [StoreSaveRequest.JoinChange]) throws
    /// Writes the member order of ordered relationships (after inserts and joins).
    mutating func writeOrders(_ orders: [StoreSaveRequest.OrderChange]) throws
    /// Records one history transaction of `changes` (never empty).
    mutating func recordHistory(author: HistoryAuthor, changes: [StoreHistoryChange]) throws
}

extension StoreSaveTransaction {
    package mutating func write(_ updates: [StoreSaveRequest.Update]) throws -> [Bool] {
        var written: [Bool] = []
        written.reserveCapacity(updates.count)
        for update in updates { written.append(try write(update)) }
        return written
    }

    package mutating func remove(_ deletes: [StoreSaveRequest.Delete]) throws -> [Bool] {
        var removed: [Bool] = []
        removed.reserveCapacity(deletes.count)
        for delete in deletes { removed.append(try remove(delete)) }
        return removed
    }
}

/// The rules of a save, the same in every store: optimistic locking by row version, what counts
/// as a conflict, what history records, and when the caller may still withdraw. Engines differ
/// only in how they carry out the steps (``StoreSaveTransaction``).
package enum StoreSaveRules {
    /// Applies `request` through `transaction`:
    /// 1. every update and deletion is made only where the row still has the version the context
    ///    read; a row with another version — or, for an update, a row that is gone — is a
    ///    conflict, reported with the row as it is now. A row already deleted elsewhere is not a
    ///    conflict for a deletion, nor recorded again in history;
    /// 2. with conflicts, the answer is ``StoreSaveOutcome/conflicts(_:)``: the engine rolls back;
    /// 3. otherwise inserts, many-to-many pairs and orders are written, then (`recordingHistory`)
    ///    one history transaction of the inserts, updates and rows this save deleted;
    /// 4. `beforeCommit` is asked last, with everything written and checked: `false` answers
    ///    ``StoreSaveOutcome/withdrawn`` (the engine rolls back).
    package static func apply<Transaction: StoreSaveTransaction>(_ request: StoreSaveRequest, to transaction: inout Transaction,
                                                                 recordingHistory: Bool,
                                                                  beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome {
        var conflicts: [StoreConflict] = []
        for (update, written) in zip(request.updates, try transaction.write(request.updates)) where !written {
            conflicts.append(StoreConflict(entity: update.entity, primaryKey: update.primaryKey, expectedVersion: update.expectedVersion,
                                           current: try transaction.currentRow(entity: update.entity, primaryKey: update.primaryKey)))
        }
        var removed: [StoreSaveRequest.Delete] = []
        for (delete, deleted) in zip(request.deletes, try transaction.remove(request.deletes)) {
            if deleted {
                removed.append(delete)
            } else if let current = try transaction.currentRow(entity: delete.entity, primaryKey: delete.primaryKey) {
                conflicts.append(StoreConflict(entity: delete.entity, primaryKey: delete.primaryKey, expectedVersion: delete.expectedVersion,
                                               current: current))
            }
        }
        guard conflicts.isEmpty else { return .conflicts(conflicts) }
        try transaction.insert(request.inserts)
        try transaction.writeJoins(request.joins)
        try transaction.writeOrders(request.orders)
        if recordingHistory && request.recordsHistory {
            let changes = request.inserts.map { StoreHistoryChange(type: .insert, entity: $0.entity, primaryKey: $0.primaryKey) }
                + request.updates.map { StoreHistoryChange(type: .update, entity: $0.entity, primaryKey: $0.primaryKey,
                                                           changedSlots: $0.changedSlots) }
                + removed.map { StoreHistoryChange(type: .delete, entity: $0.entity, primaryKey: $0.primaryKey, values: $0.values) }
            if !changes.isEmpty { try transaction.recordHistory(author: request.author, changes: changes) }
        }
        if let beforeCommit, try !beforeCommit() { return .withdrawn }
        return .committed
    }
}
