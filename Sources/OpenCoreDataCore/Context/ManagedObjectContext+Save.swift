import Foundation

extension ManagedObjectContext {
    /// Writes the context's unsaved changes to its store in one transaction.
    ///
    /// Inserted objects get permanent IDs; every changed or deleted object's version is checked
    /// against the store (optimistic locking). Conflicts go to the context's ``mergePolicy``:
    /// `.error` (the default) throws a ``CoreDataError`` with code 133020 listing the
    /// ``CoreDataError/conflicts``, writes nothing and leaves the context's changes in place; the
    /// other policies resolve them and the save is retried. Missing mandatory values fail with
    /// 1570 (several errors: 1560). A successful save posts `.NSManagedObjectContextDidSave`
    /// and ``didSaveObjectIDsNotification`` on the context's queue, and contexts that
    /// ``automaticallyMergesChangesFromParent`` merge it on their own queues.
    public func save() throws {
        checkQueue("save()")
        graph.isSaving = true
        defer { graph.isSaving = false }
        processPendingChanges()
        discardInaccessibleObjects()
        if let failure = relationshipReadFailure {
            relationshipReadFailure = nil
            var error = failure
            error.message = """
                A relationship could not be read from the store since the last save, so changes may rest on an \
                incomplete object graph; nothing was saved. Refresh the objects involved (or roll back) and \
                save again. The store said: \(failure.message)
                """
            throw error
        }
        guard hasPendingWork else {
            clearPending()
            return
        }
        try prepareObjectsForSave()
        guard hasPendingWork else {     // willSave may have taken every change back
            clearPending()
            return
        }
        // Whatever the save does to these objects (permanent IDs, a merge policy's decisions,
        // deleted objects leaving), observers re-examine them once it is over, saved or not.
        let touched = hasGraphObservers ? graph.pending.all : []
        defer { tellGraphObservers(GraphChange(rechecked: touched)) }
        try validateForSave()
        if let parent {
            pushToParent(parent)
            return
        }
        let coordinator = try requireCoordinator()
        if coordinator.managedObjectModel.hasSavedDerivations { computeDerivations() }
        // One list (filtering the pending list's copy would copy every object's reference again).
        var needIDs: [ManagedObject] = []
        needIDs.reserveCapacity(graph.pending.inserted.count)
        for object in graph.pending.liveInserts(in: self) where object.objectID.isTemporaryID { needIDs.append(object) }
        if !needIDs.isEmpty { try obtainPermanentIDs(forTemporary: needIDs, in: nil) }

        var attempts = 0
        while true {
            let constraintConflicts = try findConstraintConflicts()
            if !constraintConflicts.isEmpty {
                attempts += 1
                guard attempts < Self.saveAttempts else { throw CoreDataError.constraintConflicts(constraintConflicts) }
                try mergePolicy.resolve(constraintConflicts: constraintConflicts)
                continue
            }
            var parts = try makeSaveBatches(coordinator)
            guard !parts.isEmpty else {
                clearPending()
                return
            }
            // A save to one store has its conflicts resolved inside the store's transaction, with
            // their rows held (StoreSaveRules.save), so that no other writer changes them between
            // the policy's decision and the write; `parts` then becomes the save made again.
            var policyError: (any Error)?
            var resolvedInStore = false
            let resolve: StoreConflictResolver? = parts.count == 1 && resolvesConflicts ? { [self] conflicts in
                let store = parts[0].store
                attempts += 1
                let mergeConflicts = makeMergeConflicts(conflicts, store: store)
                guard attempts < Self.saveAttempts else { throw CoreDataError.mergeConflicts(mergeConflicts) }
                do {
                    try mergePolicy.resolve(mergeConflicts: mergeConflicts)
                } catch {
                    policyError = error
                    throw error
                }
                resolvedInStore = true
                let remade = try makeSaveBatches(coordinator)
                guard remade.count == 1, remade[0].store === store else { return nil }
                parts = remade
                return remade[0].batch.request
            } : nil
            let result: PersistentStoreCoordinator.SaveResult
            do {
                result = try coordinator.save(parts.map { ($0.store, $0.batch.request) }, from: self, resolving: resolve) { [self] in makeEvent(parts) }
            } catch {
                throw policyError ?? PersistentStoreCoordinator.wrap(error)
            }
            guard case .conflicts(let conflicts, let store) = result, !conflicts.isEmpty else {
                advanceQueryGeneration()
                if parts.count == 1 {
                    // The lists as they are: joining one part's lists would copy every object's reference.
                    didCommit(inserted: parts[0].batch.inserted, updated: parts[0].batch.updated, deleted: parts[0].batch.deleted, toStore: true)
                } else {
                    didCommit(inserted: parts.flatMap(\.batch.inserted), updated: parts.flatMap(\.batch.updated),
                              deleted: parts.flatMap(\.batch.deleted), toStore: true)
                }
                return
            }
            // Resolved inside already, the save made again fits no single store: made once more.
            if resolvedInStore { continue }
            attempts += 1
            let mergeConflicts = makeMergeConflicts(conflicts, store: store)
            guard attempts < Self.saveAttempts else { throw CoreDataError.mergeConflicts(mergeConflicts) }
            try mergePolicy.resolve(mergeConflicts: mergeConflicts)
        }
    }

    /// How many times a save whose conflicts the merge policy resolved is written again before
    /// its conflicts are thrown.
    static let saveAttempts = 16

    /// Whether the merge policy may resolve conflicts (the `.error` policy throws them: it is
    /// asked after the store's transaction, which then need not hold their rows).
    private var resolvesConflicts: Bool {
        type(of: mergePolicy) != MergePolicy.self || mergePolicy.mergeType != .error
    }

    /// Who this context's saves are, for persistent history.
    package var historyAuthor: HistoryAuthor { HistoryAuthor(author: transactionAuthor, contextName: name) }

    /// Whether anything waits to be saved.
    private var hasPendingWork: Bool { graph.pending.hasLiveChanges(in: self) }

    func clearPending() {
        graph.releaseAll()
    }

    /// The objects of one save attempt and the request that writes them.
    struct SaveBatch {
        var request = StoreSaveRequest()
        var inserted: [ManagedObject] = []
        var updated: [ManagedObject] = []
        var deleted: [ManagedObject] = []
    }

    /// The save's parts: one batch per store that has changed objects (the store each object's
    /// ID names), in the order the stores were added.
    private func makeSaveBatches(_ coordinator: PersistentStoreCoordinator) throws -> [(store: PersistentStore, batch: SaveBatch)] {
        let stores = coordinator.persistentStores
        if stores.count == 1 {
            // The pending lists walked once, in place (building them would copy every object's
            // reference); every object must be this store's: one of a store removed since is not
            // written into another under its key.
            let batch = try makeSaveBatch(inserted: graph.pending.liveInserts(in: self), changed: graph.pending.liveChanges(in: self),
                                          onlyStore: stores[0].number)
            guard !batch.inserted.isEmpty || !batch.updated.isEmpty || !batch.deleted.isEmpty else { return [] }
            return [(stores[0], batch)]
        }
        var groups: [UInt32: (inserted: [ManagedObject], changed: [ManagedObject])] = [:]
        for object in graph.pending.liveInserts(in: self) { groups[object.objectID.storeNumber, default: ([], [])].inserted.append(object) }
        for object in graph.pending.liveChanges(in: self) where object.objectID.primaryKey != nil {
            groups[object.objectID.storeNumber, default: ([], [])].changed.append(object)
        }
        for (number, group) in groups where !stores.contains(where: { $0.number == number }) {
            if let stray = group.inserted.first ?? group.changed.first { throw strayObject(stray) }
        }
        var parts: [(store: PersistentStore, batch: SaveBatch)] = []
        for store in stores {
            guard let group = groups[store.number] else { continue }
            try checkRelationshipsStay(in: store, group.inserted + group.changed.filter { !$0.isDeletedFlag })
            let batch = try makeSaveBatch(inserted: group.inserted, changed: group.changed, onlyStore: nil)
            if !batch.inserted.isEmpty || !batch.updated.isEmpty || !batch.deleted.isEmpty { parts.append((store, batch)) }
        }
        return parts
    }

    private func strayObject(_ object: ManagedObject) -> CoreDataError {
        CoreDataError(.persistentStoreOperation, """
            \(object.entity.name) \(object.objectID.uriRepresentation().absoluteString) belongs to a store \
            that is not added to this coordinator (it was removed); nothing was saved. Add that store again to \
            save it, or roll back (or refresh) the object.
            """,
                      affectedObjectIDs: [object.objectID])
    }

    /// Core Data keeps each relationship inside one store: an object may not point at an object
    /// of another store (no store could keep the key of a row it does not have).
    private func checkRelationshipsStay(in store: PersistentStore, _ objects: [ManagedObject]) throws {
        let number = store.number
        for object in objects {
            var others: [ManagedObjectID] = []
            for value in object.values { if case .object(let id) = value { others.append(id) } }
            for state in object.toMany { others += state.added }
            if let other = others.first(where: { $0.storeNumber != 0 && $0.storeNumber != number }) {
                throw CoreDataError(.managedObjectValidation, """
                    \(object.entity.name) \(object.objectID.uriRepresentation().absoluteString) is related to \
                    \(other.entity.name) \(other.uriRepresentation().absoluteString), which lives in another \
                    store; relationships cannot cross stores. Keep both objects in one store (assign(_:to:) \
                    before the first save) or refer to the other object by an attribute (its URI or a key) \
                    instead.
                    """)
            }
        }
    }

    /// The batch of one store's objects; with `onlyStore`, an object of another store (one removed
    /// since) is refused (inserted objects are checked first, then changed ones, in list order).
    private func makeSaveBatch(inserted: some Sequence<ManagedObject>, changed: some Sequence<ManagedObject>,
                               onlyStore: UInt32?) throws -> SaveBatch {
        var batch = SaveBatch()
        // Inserted objects in insertion order: their keys were allocated in that order and rows
        // are appended to the table in key order.
        batch.request.inserts.reserveCapacity(inserted.underestimatedCount)
        for object in inserted {
            if let onlyStore, object.objectID.storeNumber != onlyStore { throw strayObject(object) }
            guard let pk = object.objectID.primaryKey else { continue }
            batch.request.inserts.append(.init(entity: object.entity, primaryKey: pk, values: object.values))
            batch.inserted.append(object)
        }
        // Objects changed in the same slots (a bulk update) share one list of slots: the key is
        // the changed slots (their bits, for objects whose changes are all in the first 32 slots)
        // and the entity's column count (which splits off to-many slots).
        var lastKey: (first32: UInt32, columns: Int)?
        var lastSlots: (written: [Int], changed: [Int]) = ([], [])
        for object in changed {
            guard let pk = object.objectID.primaryKey else { continue }
            if let onlyStore, object.objectID.storeNumber != onlyStore { throw strayObject(object) }
            if object.isDeletedFlag {
                if object.isFaultFlag { object.willAccessValue() }
                if object.isInaccessibleFlag { continue }   // no row to delete; discarded by the next save
                // The values go along only for the history's tombstones (a reference fewer to
                // take and drop per deleted object otherwise).
                let entity = object.entity
                batch.request.deletes.append(.init(entity: entity, primaryKey: pk, expectedVersion: object.snapshot?.version ?? 0,
                                                   values: entity.tombstoneAttributes.isEmpty ? nil : object.values))
                batch.deleted.append(object)
            } else if object.hasDirtySlots {
                // To-many changes bump the version but have no column of their own.
                let columns = object.entity.valueSlotCount
                let first32 = object.state.dirtySlotsFirst32, beyond32 = object.state.hasDirtySlotsBeyond32
                if beyond32 || lastKey?.first32 != first32 || lastKey?.columns != columns {
                    let changed = object.dirty.slots        // ascending: only to-many slots pass `columns`
                    lastSlots = ((changed.last ?? 0) < columns ? changed : changed.filter { $0 < columns }, changed)
                    lastKey = beyond32 ? nil : (first32, columns)
                }
                batch.request.updates.append(.init(entity: object.entity, primaryKey: pk, expectedVersion: object.snapshot?.version ?? 0,
                                                   slots: lastSlots.written, values: object.values, changedSlots: lastSlots.changed))
                batch.updated.append(object)
            }
        }
        batch.request.author = historyAuthor
        // Walked in place: concatenating the lists would copy every saved object's reference twice.
        batch.request.joins = joinChanges(of: [batch.inserted, batch.updated, batch.deleted].joined())
        batch.request.orders = orderChanges(of: [batch.inserted, batch.updated].joined())
        return batch
    }

    /// The Sendable description of a save, built only when someone listens.
    private func makeEvent(_ parts: [(store: PersistentStore, batch: SaveBatch)]) -> SaveEvent {
        var event = SaveEvent(
            insertedObjectIDs: Set(parts.lazy.flatMap(\.batch.inserted).map(\.objectID)),
            updatedObjectIDs: Set(parts.lazy.flatMap(\.batch.updated).map(\.objectID)),
            deletedObjectIDs: Set(parts.lazy.flatMap(\.batch.deleted).map(\.objectID)),
            contextName: name, transactionAuthor: transactionAuthor)
        // (Rows with derived attributes are not passed on: the store's triggers changed them after
        // the save wrote them, so merging contexts read them.)
        for (store, batch) in parts {
            let number = store.number
            for update in batch.request.updates where !update.entity.hasDerivedAttributes {
                let id = ManagedObjectID.permanent(update.entity, storeNumber: number, primaryKey: update.primaryKey)
                event.snapshots[id] = RowSnapshot(values: update.values, version: update.expectedVersion + 1)
            }
        }
        event.source = ObjectIdentifier(self)
        return event
    }

    /// Brings the saved objects up to date and tells observers.
    /// After a save, to the store or pushed into the parent (one implementation for both): the
    /// saved changes become the objects' committed state, deleted objects leave the context, and
    /// the save is announced. A store save moves each row's version (a new row starts at 1); a
    /// push leaves versions as they are (no row changed in the store) and registers the inserted
    /// objects under the temporary IDs they keep.
    func didCommit(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], toStore: Bool) {
        let step: Int64 = toStore ? 1 : 0
        for object in inserted {
            object.state.commit(version: step)
            if !toStore { graph.register(object) }   // a store save registered them with their permanent IDs
        }
        for object in updated { object.state.commit(version: (object.snapshot?.version ?? 0) + step) }
        for object in deleted {
            graph.removeFromRegistry(object)   // the pending changes are cleared just below
            object.managedObjectContext = nil
        }
        clearPending()
        runDidSave(inserted, updated, deleted)
        announceSave(inserted: inserted, updated: updated, deleted: deleted)
    }

    /// Tells observers about a successful save (to the store or into the parent), on this
    /// context's queue: `.NSManagedObjectContextDidSave` with the objects, the object-ID
    /// notification, and `didSaveEvents`.
    func announceSave(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) {
        // Built and delivered on the context's queue.
        let info = UncheckedSendable(graph.announced.userInfo(inserted: inserted, updated: updated, deleted: deleted))
        graph.announced.removeAll()
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: info.value)
        let event = SaveEvent(
            insertedObjectIDs: Set(inserted.lazy.map(\.objectID)), updatedObjectIDs: Set(updated.lazy.map(\.objectID)),
            deletedObjectIDs: Set(deleted.lazy.map(\.objectID)), contextName: name, transactionAuthor: transactionAuthor)
        NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: event.userInfo)
        saveEvents.send(event)
        // An event of each child's own (see the coordinator's merges).
        for child in mergingChildren { child.perform { child.merge(event) } }
    }

    /// Conflicts as Core Data reports them, with the objects of this context.
    package func makeMergeConflicts(_ conflicts: [StoreConflict], store: PersistentStore) -> [MergeConflict] {
        var result: [MergeConflict] = []
        for conflict in conflicts {
            let id = ManagedObjectID.permanent(conflict.entity, storeNumber: store.number, primaryKey: conflict.primaryKey)
            guard let object = graph.registered(id) else { continue }
            let cached = persistentStoreCoordinator?.rowCache.snapshot(for: id)
            result.append(MergeConflict(
                sourceObject: object,
                objectSnapshot: object.snapshot.map { conflict.entity.dictionary(from: $0.values) },
                cachedSnapshot: cached.map { conflict.entity.dictionary(from: $0.values) },
                persistedSnapshot: conflict.current.map { conflict.entity.dictionary(from: $0.values) },
                oldVersionNumber: Int(conflict.expectedVersion),
                newVersionNumber: Int(conflict.current?.version ?? 0),
                persisted: conflict.current))
        }
        return result
    }
}

extension EntityDescription {
    /// Stored values as a dictionary by attribute name (`NSNull` for nil), as Core Data's snapshots.
    package func dictionary(from values: [ManagedValue]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (slot, attribute) in storedAttributes.enumerated() where slot < values.count {
            result[attribute.name] = attribute.appValue(values[slot]) ?? NSNull()
        }
        return result
    }
}

extension CoreDataError {
    /// 133020 with the conflicts, as Core Data reports an optimistic-locking failure.
    package static func mergeConflicts(_ conflicts: [MergeConflict]) -> CoreDataError {
        CoreDataError(.managedObjectMerge,
                      """
                          Could not merge changes. \(conflicts.count) object(s) changed in the store since \
                          this context read them; refresh them or set a merge policy.
                          """,
                      affectedObjectIDs: conflicts.map(\.sourceObject.objectID), conflicts: conflicts)
    }
}
