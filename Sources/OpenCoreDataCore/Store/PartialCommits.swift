import Foundation

/// The parts of a save across several stores that committed although the save as a whole failed.
///
/// Such a save commits each store's part inside the next outer store's commit (see
/// `PersistentStoreCoordinator.commit`): when a later COMMIT fails (disk full, an I/O error),
/// the stores that had committed keep their part and the others do not. The saving context still
/// holds every change and the objects keep the permanent keys they were given, so the natural
/// answer — saving again — would insert rows that exist and update rows from a version they
/// have left. This ledger lets that retry succeed: a later save by the same context leaves out
/// of each store's part exactly what the store already committed (the same inserted rows with the
/// same values, the same updates from the same version, deletions and pairs already made), and
/// writes the rest. Anything that changed in between is written as usual — a stale update then
/// meets its conflict, as any other — except a new object whose values changed since its row was
/// committed, which is refused with a message saying what to do.
///
/// Not covered (stated in DEVIATIONS.md): a process that dies between the commits leaves one
/// store with its part and the others without, and nothing is left to retry.
///
/// Owned by the coordinator's `saveOrder` lock.
struct PartialCommits {
    private struct Entry {
        /// The context whose save this was (weak: a context that is gone retries nothing).
        weak var context: AnyObject?
        let store: ObjectIdentifier
        let request: StoreSaveRequest
    }

    private var entries: [Entry] = []

    /// Records the parts that committed in a save of `context` that then failed.
    mutating func remember(_ parts: [(PersistentStore, StoreSaveRequest)], from context: AnyObject?) {
        guard let context else { return }
        for (store, request) in parts { entries.append(Entry(context: context, store: ObjectIdentifier(store), request: request)) }
    }

    /// Forgets the parts `context` had left: its save went through.
    mutating func forget(_ context: AnyObject?) {
        entries.removeAll { $0.context == nil || $0.context === context }
    }

    /// `parts` without what their stores committed in an earlier failed save of `context`; parts
    /// left with nothing to write are dropped.
    mutating func remainder(of parts: [(PersistentStore, StoreSaveRequest)],
                            from context: AnyObject?) throws -> [(PersistentStore, StoreSaveRequest)] {
        entries.removeAll { $0.context == nil }
        guard let context, entries.contains(where: { $0.context === context }) else { return parts }
        return try parts.compactMap { store, request in
            let committed = entries.filter { $0.context === context && $0.store == ObjectIdentifier(store) }.map(\.request)
            guard !committed.isEmpty else { return (store, request) }
            let rest = try Self.subtract(committed, from: request, store: store)
            return rest.isEmpty && rest.orders.isEmpty ? nil : (store, rest)
        }
    }

    private struct RowKey: Hashable {
        let root: ObjectIdentifier
        let primaryKey: Int64
        init(_ entity: EntityDescription, _ primaryKey: Int64) {
            root = ObjectIdentifier(entity.rootEntity)
            self.primaryKey = primaryKey
        }
    }

    private static func subtract(_ committed: [StoreSaveRequest], from request: StoreSaveRequest, store: PersistentStore) throws -> StoreSaveRequest {
        var inserted: [RowKey: StoreSaveRequest.Insert] = [:]
        var updated: [RowKey: StoreSaveRequest.Update] = [:]
        var deleted: Set<RowKey> = []
        var joined: Set<StoreSaveRequest.JoinChange> = []
        for part in committed {
            for insert in part.inserts { inserted[RowKey(insert.entity, insert.primaryKey)] = insert }
            for update in part.updates { updated[RowKey(update.entity, update.primaryKey)] = update }
            for delete in part.deletes { deleted.insert(RowKey(delete.entity, delete.primaryKey)) }
            joined.formUnion(part.joins)
        }
        var rest = request
        rest.inserts = try request.inserts.filter { insert in
            guard let done = inserted[RowKey(insert.entity, insert.primaryKey)] else { return true }
            guard done.entity === insert.entity, done.values == insert.values else {
                throw CoreDataError(.persistentStoreSave, """
                    The last save of this context wrote its \(insert.entity.name) objects into the store \
                    \(store.identifier) but failed to commit in another store, and this new \
                    \(insert.entity.name) (key \(insert.primaryKey)) changed since; nothing was written. Save \
                    it again without changing it first, or call rollback() and insert it again.
                    """)
            }
            return false
        }
        rest.updates = request.updates.filter { update in
            guard let done = updated[RowKey(update.entity, update.primaryKey)] else { return true }
            return !(done.expectedVersion == update.expectedVersion && done.slots == update.slots && done.values == update.values)
        }
        rest.deletes = request.deletes.filter { !deleted.contains(RowKey($0.entity, $0.primaryKey)) }
        rest.joins = request.joins.filter { !joined.contains($0) }
        return rest
    }
}
