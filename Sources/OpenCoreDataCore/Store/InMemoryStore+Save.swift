extension InMemoryStore {
    /// A merge policy is not asked inside: it runs on the saving context's queue, where it may
    /// read this store, whose lock the save holds. Nothing is lost by asking it after: one
    /// coordinator reaches an in-memory store, and its saves take turns (`saveOrder`), so the
    /// writers that could fall into step resolving between transactions never meet here.
    package func save(_ request: StoreSaveRequest, resolving _: StoreConflictResolver?,
                      beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome {
        let outcome = try state.withLock { state in
            try Self.checkOpen(state)
            // The state is moved into the transaction (no copy: its tables stay uniquely held and
            // are changed in place) and moved back when the save ends, committed or rolled back.
            var transaction = InMemorySaveTransaction()
            swap(&state, &transaction.state)
            defer { swap(&state, &transaction.state) }
            do {
                let outcome = try StoreSaveRules.apply(request, to: &transaction, recordingHistory: tracksHistory, beforeCommit: beforeCommit)
                if case .committed = outcome { return outcome }
                transaction.rollBack()
                return outcome
            } catch {
                transaction.rollBack()
                throw error
            }
        }
        if case .committed = outcome { notifyChange() }
        return outcome
    }
}

/// A save's steps in the in-memory store, on its state while the store's lock is held. Every
/// write first notes how to put back what it replaces, so that rolling back undoes exactly what
/// the save changed (copying the state instead would cost the size of the store on every save).
struct InMemorySaveTransaction: StoreSaveTransaction {
    var state = InMemoryStore.State()
    /// How to undo each write, oldest first.
    private var undo: [(inout InMemoryStore.State) -> Void] = []

    /// Puts back everything written, newest first.
    mutating func rollBack() {
        for step in undo.reversed() { step(&state) }
        undo = []
    }

    /// Replaces (or removes, with `nil`) a row, noting the row it replaces.
    private mutating func put(_ row: StoreRow?, root: String, primaryKey: Int64) {
        let previous = state.tables[root]?.rows[primaryKey]
        let hadTable = state.tables[root] != nil
        undo.append { state in
            if hadTable { state.tables[root]?.rows[primaryKey] = previous } else { state.tables[root] = nil }
        }
        state.tables[root, default: InMemoryStore.Table()].rows[primaryKey] = row
    }

    mutating func write(_ update: StoreSaveRequest.Update) throws -> Bool {
        let root = update.entity.rootEntity.name
        guard var row = state.tables[root]?.rows[update.primaryKey], row.snapshot.version == update.expectedVersion else { return false }
        for slot in update.slots { row.snapshot.values[slot] = update.values[slot] }
        row.snapshot.version = update.expectedVersion + 1
        put(row, root: root, primaryKey: update.primaryKey)
        return true
    }

    mutating func remove(_ delete: StoreSaveRequest.Delete) throws -> Bool {
        let root = delete.entity.rootEntity.name
        guard let row = state.tables[root]?.rows[delete.primaryKey], row.snapshot.version == delete.expectedVersion else { return false }
        put(nil, root: root, primaryKey: delete.primaryKey)
        return true
    }

    mutating func currentRow(entity: EntityDescription, primaryKey: Int64) throws -> RowSnapshot? {
        state.tables[entity.rootEntity.name]?.rows[primaryKey]?.snapshot
    }

    mutating func insert(_ inserts: [StoreSaveRequest.Insert]) throws {
        for insert in inserts {
            let root = insert.entity.rootEntity.name
            let maxKey = state.tables[root]?.maxKey
            put(StoreRow(entity: insert.entity, primaryKey: insert.primaryKey, snapshot: RowSnapshot(values: insert.values, version: 1)),
                root: root, primaryKey: insert.primaryKey)
            undo.append { state in if let maxKey { state.tables[root]?.maxKey = maxKey } }
            state.tables[root]?.maxKey = max(maxKey ?? 0, insert.primaryKey)
        }
    }

    mutating func writeJoins(_ joins: [StoreSaveRequest.JoinChange]) throws {
        for join in joins {
            // Kept from both sides: the relationship's pair and its inverse's.
            let pairs = [(join.relationship, InMemoryStore.Pair(source: join.source, destination: join.destination))]
                + (join.relationship.inverseRelationship.map { [($0, InMemoryStore.Pair(source: join.destination, destination: join.source))] } ?? [])
            for (relationship, pair) in pairs {
                let key = ObjectIdentifier(relationship)
                let wasPresent = state.joins[key]?.contains(pair) ?? false
                guard wasPresent != join.isInsert else { continue }
                undo.append { state in
                    if wasPresent { state.joins[key, default: []].insert(pair) } else { state.joins[key]?.remove(pair) }
                }
                if join.isInsert { state.joins[key, default: []].insert(pair) } else { state.joins[key]?.remove(pair) }
            }
        }
    }

    mutating func writeOrders(_ orders: [StoreSaveRequest.OrderChange]) throws {
        for change in orders {
            let key = ObjectIdentifier(change.relationship)
            let previous = state.orders[key]?[change.source]
            undo.append { state in state.orders[key, default: [:]][change.source] = previous }
            state.orders[key, default: [:]][change.source] = change.members
        }
    }

    mutating func recordHistory(author: HistoryAuthor, changes: [StoreHistoryChange]) throws {
        let (count, lastTransaction, lastChange) = (state.history.count, state.lastTransaction, state.lastChange)
        undo.append { state in
            state.history.removeSubrange(count...)
            state.lastTransaction = lastTransaction
            state.lastChange = lastChange
        }
        InMemoryStore.record(&state, author: author, changes: changes)
    }
}
