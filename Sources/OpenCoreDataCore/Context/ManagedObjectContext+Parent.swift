import Foundation

/// One object as a child context sees it through its parent.
package struct ParentRow: Sendable {
    package var id: ManagedObjectID
    package var snapshot: RowSnapshot
}

extension ParentRow {
    /// An object as this context sees it now (its unsaved values, at its committed version).
    init(_ object: ManagedObject) {
        self.init(id: object.objectID, snapshot: RowSnapshot(values: object.values, version: object.snapshot?.version ?? 0))
    }
}

/// What a child context's save hands its parent.
package struct ChildChange: Sendable {
    package enum Kind: Sendable { case insert, update, delete }
    package var id: ManagedObjectID
    package var kind: Kind
    package var slots: [Int]
    package var values: [ManagedValue]
    /// Per to-many index: the members added and removed in the child.
    package var toManyChanges: [Int: (added: [ManagedObjectID], removed: [ManagedObjectID])] = [:]
}

extension ChildChange {
    /// The change with every ID in terms of `context` (retired temporary IDs replaced).
    func localized(by context: ManagedObjectContext) -> ChildChange {
        var copy = self
        copy.id = context.localize(id)
        copy.values = values.map { value in
            if case .object(let id) = value { return .object(context.localize(id)) }
            return value
        }
        copy.toManyChanges = toManyChanges.mapValues { ($0.added.map(context.localize), $0.removed.map(context.localize)) }
        return copy
    }
}

extension ManagedObjectContext {
    /// For a child's fetch (on this context's queue): the objects of the request's entity as this
    /// context sees them — its parent's or store's rows, with this context's unsaved inserts,
    /// changes and deletes applied. Order and window are left to the child.
    package func rowsForChild(_ request: StoreFetchRequest) throws -> [ParentRow] {
        var unwindowed = request
        unwindowed.limit = 0
        unwindowed.offset = 0
        let sources: [ParentRow]
        if let parent {
            sources = try parent.performAndWait { try parent.rowsForChild(unwindowed) }
        } else {
            let coordinator = try requireCoordinator()
            let (store, rows) = try reading { try coordinator.fetch(unwindowed) }
            sources = rows.map { ParentRow(id: coordinator.objectID(of: $0, in: store), snapshot: $0.snapshot) }
        }
        let pendingResults = PendingResults(context: self, request: request)
        var result: [ParentRow] = []
        var read = Set<ManagedObjectID>()
        for row in sources {
            read.insert(row.id)
            guard let object = graph.registered(row.id) ?? insertedObject(for: row.id), !object.isFaultFlag else {
                result.append(row)
                continue
            }
            if pendingResults.keeps(object) { result.append(ParentRow(object)) }
        }
        for object in pendingResults.joining(besides: { read.contains($0.objectID) }) { result.append(ParentRow(object)) }
        return result
    }

    /// The state of an object as this context sees it, for a child (on this context's queue):
    /// its in-memory values when registered and loaded, else the committed row.
    package func currentRow(for id: ManagedObjectID, fresh: Bool) throws(CoreDataError) -> RowSnapshot? {
        let id = localize(id)
        if let object = graph.registered(id) ?? insertedObject(for: id), !object.isFaultFlag {
            return object.isDeletedFlag ? nil : RowSnapshot(values: object.values, version: object.snapshot?.version ?? 0)
        }
        return try loadRow(for: id, fresh: fresh)
    }

    /// A child's save, pushed into this context (on this context's queue): its inserts become
    /// inserts here (same temporary IDs), its changes become changes here, its deletes deletes.
    package func absorb(_ changes: [ChildChange]) {
        for var change in changes {
            // The child may still use temporary IDs this context has since made permanent.
            if !graph.retiredTemporaryIDs.isEmpty { change = change.localized(by: self) }
            switch change.kind {
            case .insert:
                if let existing = insertedObject(for: change.id) ?? graph.registered(change.id) {
                    for slot in change.slots { existing.writeValue(change.values[slot], slot: slot) }
                    continue
                }
                let object = ManagedObject.materialize(entity: modelEntity(for: change.id.entity), id: change.id, context: self, snapshot: nil)
                object.state.receiveInsert(values: change.values)
                if !change.id.isTemporaryID { graph.register(object) }
                graph.holdInserted(object)
                graph.markUnprocessed(object)
                applyToManyChanges(change.toManyChanges, to: object)
            case .update:
                let object = self.object(with: change.id)
                for slot in change.slots { object.writeValue(change.values[slot], slot: slot) }
                applyToManyChanges(change.toManyChanges, to: object)
            case .delete:
                delete(object(with: change.id))
            }
        }
        processPendingChanges()
    }

    /// Pushes this (child) context's changes into its parent: no store I/O.
    func pushToParent(_ parent: ManagedObjectContext) {
        let inserted = graph.pending.liveInserted(in: self)
        let changed = graph.pending.liveChanged(in: self)
        var changes: [ChildChange] = []
        for object in inserted {
            changes.append(ChildChange(id: object.objectID, kind: .insert, slots: Array(object.values.indices), values: object.values,
                                       toManyChanges: object.toManyChanges))
        }
        var updated: [ManagedObject] = [], deleted: [ManagedObject] = []
        for object in changed {
            if object.isDeletedFlag {
                changes.append(ChildChange(id: object.objectID, kind: .delete, slots: [], values: []))
                deleted.append(object)
            } else {
                changes.append(ChildChange(id: object.objectID, kind: .update, slots: object.dirty.slots.filter { $0 < object.entity.valueSlotCount },
                                           values: object.values, toManyChanges: object.toManyChanges))
                updated.append(object)
            }
        }
        parent.performAndWait { parent.absorb(changes) }
        didCommit(inserted: inserted, updated: updated, deleted: deleted, toStore: false)
    }
}
