import Foundation

extension ManagedObjectContext {
    /// Posted after every successful save, on the saving context's queue, with `Sendable` object
    /// ID sets under `NSInsertedObjectIDsKey`, `NSUpdatedObjectIDsKey`, `NSDeletedObjectIDsKey`.
    /// Mirrors `NSManagedObjectContext.didSaveObjectIDsNotification`.
    public static let didSaveObjectIDsNotification = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")

    /// Posted on a context's queue after it merged changes (``mergeChanges(fromContextDidSave:)``,
    /// ``mergeChanges(fromRemoteContextSave:into:)``, automatic merges from its parent or
    /// coordinator, history merges), with the merged object IDs under `NSInsertedObjectIDsKey`,
    /// `NSUpdatedObjectIDsKey`, `NSDeletedObjectIDsKey`. Mirrors
    /// `NSManagedObjectContext.didMergeChangesObjectIDsNotification`.
    public static let didMergeChangesObjectIDsNotification = Notification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")

    /// Posted on a context's queue when ``save()`` begins, before `willSave()` runs on the
    /// objects (not posted when there is nothing to save). Mirrors
    /// `NSManagedObjectContext.willSaveObjectsNotification`.
    public static let willSaveObjectsNotification = Notification.Name("NSManagedObjectContextWillSaveNotification")

    /// This context's saves, for Swift concurrency: `for await event in context.didSaveEvents { … }`.
    public var didSaveEvents: AsyncStream<SaveEvent> { saveEvents.stream() }

    /// Merges another context's save into this one (call it on this context's queue). Takes the
    /// object form (`.NSManagedObjectContextDidSave`) or the ID form
    /// (``didSaveObjectIDsNotification``).
    ///
    /// Updated objects registered here get the saved values while keeping this context's own
    /// unsaved changes, property by property (no conflict now; a later save of a property both
    /// changed is resolved by the merge policy). Inserted objects are registered as faults.
    /// Deleted objects become deleted here and leave fetch results. An object is never moved back
    /// to an older version than it has: merging a stale notification changes nothing.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        checkQueue("mergeChanges(fromContextDidSave:)")
        merge(Self.event(from: notification.userInfo ?? [:]))
    }

    /// Merges changes described by object IDs (or their URIs) into several contexts, each on its
    /// own queue (this call waits for them). Keys: `NSInsertedObjectsKey`, `NSUpdatedObjectsKey`,
    /// `NSDeletedObjectsKey` (or the `…ObjectIDsKey` forms) with arrays or sets of
    /// `ManagedObjectID` or `URL`. Mirrors `mergeChanges(fromRemoteContextSave:into:)`.
    public static func mergeChanges(fromRemoteContextSave changes: [AnyHashable: Any], into contexts: [ManagedObjectContext]) {
        for context in contexts {
            let resolved = UncheckedSendable(changes)
            context.performAndWait {
                guard let coordinator = context.persistentStoreCoordinator else { return }
                // The save happened elsewhere (another coordinator, another process): what this
                // coordinator cached of those rows is older than the store.
                var event = Self.event(from: resolved.value, coordinator: coordinator)
                event.readsFreshRows = true
                context.merge(event)
            }
        }
    }

    /// Reloads an object's committed values from the store. With `mergeChanges` its unsaved
    /// changes are kept on top; without, they are dropped and the object becomes a fault.
    /// Mirrors `refresh(_:mergeChanges:)`.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkQueue("refresh(_:mergeChanges:)")
        guard object.belongs(to: self), !object.isInsertedFlag else { return }
        reload(object, mergeChanges: mergeChanges)
        tellGraphObservers(GraphChange(objects: [object]))
    }

    private func reload(_ object: ManagedObject, mergeChanges: Bool) {
        if !mergeChanges {
            // A fault keeps no values, transient ones included (as in Core Data).
            turnIntoFault(object)
            graph.release(object)
            return
        }
        guard !object.isFaultFlag, let row = try? loadRow(for: object.objectID, fresh: true) else { return }
        apply(row, to: object, keepingChanges: true)
    }

    /// Refreshes every registered object, keeping unsaved changes. Mirrors `refreshAllObjects()`.
    public func refreshAllObjects() {
        checkQueue("refreshAllObjects()")
        graph.purgeUnreferencedObjects()
        let refreshed = graph.registry.objects.filter { !$0.isFaultFlag && !$0.isInsertedFlag && $0.belongs(to: self) }
        for object in refreshed { reload(object, mergeChanges: object.hasChanges) }
        tellGraphObservers(GraphChange(objects: refreshed))
    }

    /// Throws 133020 when the object's row changed (or vanished) in the store since this context
    /// read it. Mirrors `detectConflicts(for:)`.
    public func detectConflicts(for object: ManagedObject) throws {
        checkQueue("detectConflicts(for:)")
        guard !object.isInsertedFlag, let id = Optional(object.objectID), let pk = id.primaryKey else { return }
        let coordinator = try requireCoordinator()
        let store = try coordinator.store(for: id)
        let current = try loadRow(for: id, fresh: true)
        let read = object.snapshot?.version ?? current?.version ?? 0
        guard current?.version != read else { return }
        let conflict = StoreConflict(entity: object.entity, primaryKey: pk, expectedVersion: read, current: current)
        throw CoreDataError.mergeConflicts(makeMergeConflicts([conflict], store: store))
    }

    // MARK: - Internals

    /// Applies a save event (on this context's queue).
    package func merge(_ incoming: SaveEvent) {
        advanceQueryGeneration()        // merges read the newest rows, and so does the context after
        var event = incoming
        // IDs from another coordinator (another model instance) are translated to this one's.
        let sample = event.insertedObjectIDs.first ?? event.updatedObjectIDs.first ?? event.deletedObjectIDs.first
        if let sample, modelEntity(for: sample.entity) !== sample.entity {
            event.insertedObjectIDs = Set(event.insertedObjectIDs.map(localize))
            event.updatedObjectIDs = Set(event.updatedObjectIDs.map(localize))
            event.deletedObjectIDs = Set(event.deletedObjectIDs.map(localize))
            event.snapshots = Dictionary(event.snapshots.map { (localize($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
        }
        if event.readsFreshRows, let coordinator = persistentStoreCoordinator {
            // Changes made elsewhere: rows cached before them must not come back when a fault
            // of one of these objects fires later (here or in another context).
            coordinator.rowCache.remove(Array(event.updatedObjectIDs) + Array(event.deletedObjectIDs))
        }
        var refreshed = Set<ManagedObject>(), inserted = Set<ManagedObject>(), deleted = Set<ManagedObject>()
        for id in event.updatedObjectIDs {
            guard let object = graph.registered(id) else { continue }
            if object.isFaultFlag {
                // A fault has no values to refresh, but it may hold loaded to-many members.
                for index in object.toMany.indices { object.toMany[index].unload(keepingChanges: true) }
                continue
            }
            let snapshot = event.snapshots[id] ?? (try? loadRow(for: id, fresh: event.readsFreshRows)) ?? nil
            guard let snapshot, snapshot.version > (object.snapshot?.version ?? 0) else { continue }
            apply(snapshot, to: object, keepingChanges: true)
            refreshed.insert(object)
        }
        for id in event.insertedObjectIDs where !id.isTemporaryID && graph.registered(id) == nil {
            inserted.insert(object(with: id))
        }
        for id in event.deletedObjectIDs {
            guard let object = mergeDeletion(of: id) else { continue }
            deleted.insert(object)
        }
        if !(refreshed.isEmpty && inserted.isEmpty && deleted.isEmpty) {
            let info = UncheckedSendable([NSRefreshedObjectsKey: refreshed, NSInsertedObjectsKey: inserted, NSDeletedObjectsKey: deleted])
            NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info.value)
        }
        // Updated objects not registered here (or faults) are named by ID: they may now match.
        if hasGraphObservers {
            tellGraphObservers(GraphChange(objects: Array(refreshed) + Array(inserted) + Array(deleted), objectIDs: Array(event.updatedObjectIDs)))
        }
        if !(event.insertedObjectIDs.isEmpty && event.updatedObjectIDs.isEmpty && event.deletedObjectIDs.isEmpty) {
            NotificationCenter.default.post(name: Self.didMergeChangesObjectIDsNotification, object: self, userInfo: event.userInfo)
        }
    }

    /// Takes a committed row as the object's new snapshot, keeping its unsaved changes on top.
    package func apply(_ row: RowSnapshot, to object: ManagedObject, keepingChanges: Bool) {
        object.state.rebase(on: row, keeping: keepingChanges ? object.dirty : DirtySlots())
        // Members of to-many relationships may have changed with the row: reload them on use.
        for index in object.toMany.indices { object.toMany[index].unload(keepingChanges: keepingChanges) }
    }

    /// A deletion saved elsewhere reaches an object held here: as in Core Data, it becomes a
    /// pending delete — still registered, `isDeleted`, in `deletedObjects`, left out of fetches
    /// and counts — and the next save, finding no row, forgets it (no conflict, no second
    /// history entry). An object nobody holds is simply forgotten. Returns the held object.
    package func mergeDeletion(of id: ManagedObjectID) -> ManagedObject? {
        guard let object = graph.liveRegisteredObject(for: id) else { return nil }
        if object.isFaultFlag || object.isDeletedFlag {
            // Its row is gone: nothing to load or delete, ever (the save must not try to; an
            // undo of a deletion made here finds it gone).
            object.state.becomeInaccessible(slotCount: object.entity.valueSlotCount, toManyCount: object.entity.toManyRelationships.count)
        } else {
            object.state.delete()
        }
        graph.holdChanged(object)
        return object
    }

    /// Carries out a merge policy's decision for one of this context's objects at a save (the
    /// save is then retried).
    package func apply(_ decision: MergeDecision, to object: ManagedObject) {
        switch decision {
        case .acceptDeletion:
            // Deleted here and forgotten.
            graph.unregister(object)
            object.state.acceptDeletionElsewhere()
        case .reinsert:
            // Written again, under its key, at the retried save.
            graph.release(object)
            object.state.reinsert()
            graph.holdInserted(object)
        case .revertDeletion(let row):
            object.state.revertDeletion(to: row)
        case .keepDeletion(let row):
            object.state.keepDeletion(over: row)
        case .rebase(let row, let kept):
            object.state.rebase(on: row, keeping: kept)
        }
    }

    /// A save event from a notification's `userInfo` (objects, IDs or URIs).
    static func event(from info: [AnyHashable: Any], coordinator: PersistentStoreCoordinator? = nil) -> SaveEvent {
        func ids(_ keys: [String]) -> Set<ManagedObjectID> {
            var result = Set<ManagedObjectID>()
            for key in keys {
                guard let value = info[key] else { continue }
                let items: [Any]
                if let objects = value as? Set<ManagedObject> { items = Array(objects) }
                else if let objectIDs = value as? Set<ManagedObjectID> { items = Array(objectIDs) }
                else if let urls = value as? Set<URL> { items = Array(urls) }
                else if let array = value as? [Any] { items = array }
                else { items = [] }
                for item in items {
                    if let object = item as? ManagedObject { result.insert(object.objectID) }
                    else if let id = item as? ManagedObjectID { result.insert(id) }
                    else if let url = item as? URL, let id = coordinator?.managedObjectID(forURIRepresentation: url) { result.insert(id) }
                }
            }
            return result
        }
        var event = SaveEvent(
            insertedObjectIDs: ids([NSInsertedObjectsKey, NSInsertedObjectIDsKey]),
            updatedObjectIDs: ids([NSUpdatedObjectsKey, NSUpdatedObjectIDsKey]),
            deletedObjectIDs: ids([NSDeletedObjectsKey, NSDeletedObjectIDsKey]))
        event.readsFreshRows = info[SaveEvent.readsFreshRowsKey] as? Bool ?? false
        return event
    }
}
