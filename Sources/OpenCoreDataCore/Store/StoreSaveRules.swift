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
    /// The row as it is now, held by this transaction until it ends so that no other writer
    /// changes it meanwhile (PostgreSQL's `FOR UPDATE`), or `nil` when it is gone. An engine
    /// whose write transaction holds the whole store (SQLite's write lock) reads `currentRow`,
    /// the default.
    mutating func lockRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot?
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
    package mutating func lockRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot? {
        try currentRow(entity: entity, primaryKey: primaryKey)
    }

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

/// A saving context's merge policy, asked inside a store's write transaction: given the
/// conflicts (rows as they are now, held by the transaction), it resolves them and answers the
/// save made again for the same store, or `nil` when it no longer fits one store (the conflicts
/// are then the save's answer). It may throw to fail the save.
package typealias StoreConflictResolver = ([StoreConflict]) throws -> StoreSaveRequest?

/// The rules of a save, the same in every store: optimistic locking by row version, what counts
/// as a conflict, what history records, and when the caller may still withdraw. Engines differ
/// only in how they carry out the steps (``StoreSaveTransaction``).
package enum StoreSaveRules {
    /// Writes a save whose conflicts a merge policy may resolve, in as many transactions as it
    /// takes (`transact` runs one: it begins it, and commits only when its body answers
    /// ``StoreSaveOutcome/committed``).
    ///
    /// The first transaction is ``apply(_:to:recordingHistory:beforeCommit:)``. When it meets
    /// conflicts (and rolls back), the next one first holds the rows that conflicted
    /// (``StoreSaveTransaction/lockRow(entity:primaryKey:)``), hands those that still differ
    /// from what the save expects, as they are now, to `resolve` — the saving context's merge
    /// policy, which answers the save made again — and applies that. No other writer can change
    /// a held row between its resolution and its write, as Core Data resolves conflicts with the
    /// store locked; resolving between transactions instead lets two writers that keep saving one
    /// row fall into step, the loser finding the row changed again on every retry until it gives
    /// up (docs/Architecture.md). Each transaction holds every row that conflicted in an earlier
    /// one, so the rows a save waits for only grow; a row that conflicts although it was held (an
    /// engine that cannot hold rows) ends the loop. Without `resolve`, or when it answers `nil`
    /// (the save made again no longer fits this store), the conflicts are the answer.
    package static func save<Transaction: StoreSaveTransaction>(
        _ request: StoreSaveRequest, resolving resolve: StoreConflictResolver?, recordingHistory: Bool,
        beforeCommit: (() throws -> Bool)?,
        transact: ((inout Transaction) throws -> StoreSaveOutcome) throws -> StoreSaveOutcome
    ) throws -> StoreSaveOutcome {
        var request = request
        var held: [(entity: EntityDescription, primaryKey: Int64)] = []
        var heldKeys = Set<RowKey>()
        while true {
            var unresolved: [StoreConflict]?
            let outcome = try transact { transaction in
                if !held.isEmpty, let resolve {
                    let conflicts = try lockAndRecheck(held, of: request, in: &transaction)
                    if !conflicts.isEmpty {
                        guard let remade = try resolve(conflicts) else {
                            unresolved = conflicts
                            return .withdrawn
                        }
                        request = remade
                    }
                }
                return try apply(request, to: &transaction, recordingHistory: recordingHistory, beforeCommit: beforeCommit)
            }
            if let unresolved { return .conflicts(unresolved) }
            guard resolve != nil, case .conflicts(let conflicts) = outcome else { return outcome }
            for conflict in conflicts {
                guard heldKeys.insert(RowKey(entity: ObjectIdentifier(conflict.entity), primaryKey: conflict.primaryKey)).inserted else {
                    return outcome
                }
                held.append((conflict.entity, conflict.primaryKey))
            }
        }
    }

    /// A row of a save, by entity and key.
    private struct RowKey: Hashable {
        var entity: ObjectIdentifier
        var primaryKey: Int64
    }

    /// Holds the rows of `held` still in `request` and answers those that differ from the
    /// version the request expects, as they are now (a deletion of a row that is gone is no
    /// conflict, as in `apply`).
    private static func lockAndRecheck<Transaction: StoreSaveTransaction>(
        _ held: [(entity: EntityDescription, primaryKey: Int64)], of request: StoreSaveRequest, in transaction: inout Transaction
    ) throws -> [StoreConflict] {
        var updated: [RowKey: Int64] = [:], deleted: [RowKey: Int64] = [:]
        for update in request.updates { updated[RowKey(entity: ObjectIdentifier(update.entity), primaryKey: update.primaryKey)] = update.expectedVersion }
        for delete in request.deletes { deleted[RowKey(entity: ObjectIdentifier(delete.entity), primaryKey: delete.primaryKey)] = delete.expectedVersion }
        var conflicts: [StoreConflict] = []
        // In the order the writes take (table, key), so that two saves wait instead of deadlocking.
        for row in held.sorted(by: { StoreSaveRequest.writesBefore($0.entity, $0.primaryKey, $1.entity, $1.primaryKey) }) {
            let key = RowKey(entity: ObjectIdentifier(row.entity), primaryKey: row.primaryKey)
            if let expected = updated[key] {
                let current = try transaction.lockRow(entity: row.entity, primaryKey: row.primaryKey)
                if current?.version != expected {
                    conflicts.append(StoreConflict(entity: row.entity, primaryKey: row.primaryKey, expectedVersion: expected, current: current))
                }
            } else if let expected = deleted[key] {
                if let current = try transaction.lockRow(entity: row.entity, primaryKey: row.primaryKey), current.version != expected {
                    conflicts.append(StoreConflict(entity: row.entity, primaryKey: row.primaryKey, expectedVersion: expected, current: current))
                }
            }
        }
        return conflicts
    }

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
        // By index: iterating the requests would copy each one (a reference taken and dropped for
        // each of its entity and arrays) to look at the few that conflict.
        let written = try transaction.write(request.updates)
        for index in 0..<min(written.count, request.updates.count) where !written[index] {
            let update = request.updates[index]
            conflicts.append(StoreConflict(entity: update.entity, primaryKey: update.primaryKey, expectedVersion: update.expectedVersion,
                                           current: try transaction.currentRow(entity: update.entity, primaryKey: update.primaryKey)))
        }
        let removedRows = try transaction.remove(request.deletes)
        let deletes = min(removedRows.count, request.deletes.count)
        for index in 0..<deletes where !removedRows[index] {
            let delete = request.deletes[index]
            if let current = try transaction.currentRow(entity: delete.entity, primaryKey: delete.primaryKey) {
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
                + (0..<deletes).filter { removedRows[$0] }.map { index in
                    let delete = request.deletes[index]
                    return StoreHistoryChange(type: .delete, entity: delete.entity, primaryKey: delete.primaryKey, values: delete.values)
                }
            if !changes.isEmpty { try transaction.recordHistory(author: request.author, changes: changes) }
        }
        if let beforeCommit, try !beforeCommit() { return .withdrawn }
        return .committed
    }
}
