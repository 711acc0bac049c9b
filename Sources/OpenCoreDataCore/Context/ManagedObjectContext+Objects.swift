import Foundation

extension ManagedObjectContext {
    /// Inserts an object made without a context; it is saved at the next ``save()``. Inserting an
    /// object again that is already in this context changes nothing, except that an unsaved
    /// insert deleted since is inserted again.
    public func insert(_ object: ManagedObject) {
        checkQueue("insert(_:)")
        if object.belongs(to: self) {
            if object.isInsertedFlag { object.state.insert() }
            return
        }
        precondition(object.managedObjectContext == nil,
                     "The object \(object.objectID) already belongs to another context; an object can be inserted into one context only.")
        // (An insert deleted before any save left its context detached, deleted: redo inserts it again.)
        precondition(object.state.phase == .detached || object.state.phase == .insertedDeleted, """
            The object \(object.objectID) was read from a store or saved by a context (it is \(object.state.phase)); \
            only a new object, or one whose insert was rolled back, can be inserted. Make a new object instead.
            """)
        object.managedObjectContext = self
        let firstInsert = !object.state.wasInserted
        object.state.insert()
        // Objects with temporary IDs are found through `pending`; they join the registry when
        // they get permanent IDs.
        if !object.objectID.isTemporaryID { graph.register(object) }
        graph.holdInserted(object)
        graph.markUnprocessed(object)
        undoStorage?.record(.insert(object))
        if firstInsert { object.awakeFromInsert() }
    }

    /// Marks an object for deletion at the next ``save()``. Deleting an object that was inserted
    /// and never saved simply forgets it.
    public func delete(_ object: ManagedObject) {
        checkQueue("delete(_:)")
        guard object.belongs(to: self) else {
            preconditionFailure("The object \(object.objectID) does not belong to context '\(debugName)'; delete it in its own context.")
        }
        guard !object.isDeletedFlag else { return }
        undoStorage?.record(.delete(object))
        object.state.delete()
        graph.objectDidChange(object)
    }

    /// Takes back a delete (for undo).
    package func undelete(_ object: ManagedObject) {
        guard object.isDeletedFlag else { return }
        object.state.undelete()
        if object.isInsertedFlag {
            if object.managedObjectContext == nil { object.managedObjectContext = self }
            graph.holdInserted(object)
        } else {
            if graph.registered(object.objectID) == nil { graph.register(object) }
            graph.holdChanged(object)
        }
        graph.markUnprocessed(object)
    }

    /// The object for an ID: the registered one, or a new fault that loads its row on first
    /// access. Never `nil` and never does I/O; a fault whose row does not exist traps when used.
    /// Mirrors `object(with:)`.
    public func object(with objectID: ManagedObjectID) -> ManagedObject {
        checkQueue("object(with:)")
        let objectID = localize(objectID)
        if let object = graph.registered(objectID) ?? insertedObject(for: objectID) { return object }
        let entity = modelEntity(for: objectID.entity)
        let object = ManagedObject.materialize(entity: entity, id: objectID, context: self, snapshot: nil)
        graph.register(object)
        return object
    }

    /// The object for an ID, with its values loaded; throws ``CoreDataError`` 133000 when the row
    /// does not exist. Mirrors `existingObject(with:)`.
    public func existingObject(with objectID: ManagedObjectID) throws(CoreDataError) -> ManagedObject {
        checkQueue("existingObject(with:)")
        let objectID = localize(objectID)
        if let object = insertedObject(for: objectID) { return object }
        if let object = graph.registered(objectID), !object.isFaultFlag { return object }
        guard !objectID.isTemporaryID, let row = try loadRow(for: objectID) else {
            throw CoreDataError(.managedObjectReferentialIntegrity,
                                """
                                    No object with ID \(objectID) exists in the store. It may have been \
                                    deleted, or the ID is temporary and was never saved.
                                    """,
                                affectedObjectIDs: [objectID])
        }
        if let object = graph.registered(objectID) {
            fulfil(object, with: row)
            return object
        }
        let object = ManagedObject.materialize(entity: modelEntity(for: objectID.entity), id: objectID, context: self, snapshot: row)
        graph.register(object)
        awakeFetched(object)
        return object
    }

    /// The object registered for an ID, or `nil`; never does I/O. Mirrors `registeredObject(for:)`.
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? {
        checkQueue("registeredObject(for:)")
        let objectID = localize(objectID)
        return insertedObject(for: objectID) ?? graph.liveRegisteredObject(for: objectID)
    }

    /// Discards every unsaved change: inserted objects are forgotten, deleted ones restored,
    /// changed ones get their saved values back. The undo manager forgets every change, as Core
    /// Data's does.
    public func rollback() {
        checkQueue("rollback()")
        let touched = hasGraphObservers ? graph.pending.all + graph.unprocessed : []
        defer { tellGraphObservers(GraphChange(objects: touched)) }
        for object in graph.pending.all where object.belongs(to: self) {
            if object.isInsertedFlag {
                graph.unregister(object)
                object.managedObjectContext = nil
                object.state.forgetInsert()
            } else if object.isInaccessibleFlag || object.isDeletedFlag {
                // The next use tries the store anew: the row may be back, the error passed, or
                // (a deletion merged from elsewhere) the row gone, which the load then finds.
                turnIntoFault(object)
            } else {
                object.state.discardChanges()
            }
        }
        graph.releaseAll()
        graph.deferredDeletions = []
        graph.announced.removeAll()
        _ = graph.takeUnprocessed()
        relationshipReadFailure = nil
        undoStorage?.removeAllActions()
    }

    /// Forgets every registered object, every unsaved change and what the undo manager holds,
    /// then posts `.NSManagedObjectContextObjectsDidChange` with `NSInvalidatedAllObjectsKey` (the
    /// IDs of the objects it held). Objects from before the reset must not be used afterwards.
    public func reset() {
        checkQueue("reset()")
        for object in graph.pending.all where object.belongs(to: self) { object.managedObjectContext = nil }
        var invalidated: [ManagedObjectID] = []
        invalidated.reserveCapacity(graph.registry.count)
        graph.registry.forEachObject { object in
            invalidated.append(object.objectID)
            object.managedObjectContext = nil
        }
        graph.removeAll()
        advanceQueryGeneration()
        relationshipReadFailure = nil
        undoStorage?.removeAllActions()
        tellGraphObservers(GraphChange(everything: true))
        // As Core Data does: observers learn that every object they held is gone.
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self,
                                        userInfo: [NSInvalidatedAllObjectsKey: invalidated])
    }

    /// Brings the object graph up to date with the changes made since the last call: objects
    /// deleted after being inserted are forgotten, and `.NSManagedObjectContextObjectsDidChange`
    /// is posted with the inserted, updated and deleted objects. `perform` calls it after each
    /// block and `save()` before saving.
    public func processPendingChanges() {
        checkQueue("processPendingChanges()")
        defer { undoStorage?.endEvent() }      // one undo group per event (unless grouped otherwise)
        let propagates = graph.propagatesDeletesAtEndOfEvent || graph.isSaving
        guard !graph.unprocessed.isEmpty || (propagates && !graph.deferredDeletions.isEmpty) else { return }
        if propagates && !graph.deferredDeletions.isEmpty {
            let deferred = graph.deferredDeletions
            graph.deferredDeletions = []
            propagateDeletes(deferred)
        }
        // Delete rules may delete and change more objects: apply them until nothing is new.
        var changed: [ManagedObject] = []
        while !graph.unprocessed.isEmpty {
            let batch = graph.takeUnprocessed()
            if changed.isEmpty { changed = batch } else { changed += batch }
            let deleted = batch.filter(\.isDeletedFlag)
            if propagates {
                propagateDeletes(deleted)
            } else {
                graph.deferredDeletions += deleted     // the next save applies their rules
            }
        }
        var forgotInserted = false
        defer { if forgotInserted { graph.compactInserted(in: self) } }
        // Lists first, then sets made at their final size (a set grown one insert at a time
        // rehashes every object at each doubling).
        var inserted: [ManagedObject] = [], updated: [ManagedObject] = [], deleted: [ManagedObject] = []
        for object in changed {
            if object.isInsertedFlag && object.isDeletedFlag {
                if object.belongs(to: self) {
                    graph.unregister(object)
                    object.managedObjectContext = nil
                    forgotInserted = true
                }
                continue
            }
            if object.isDeletedFlag { deleted.append(object) }
            else if object.isInsertedFlag { inserted.append(object) }
            else { updated.append(object) }
        }
        if !(inserted.isEmpty && updated.isEmpty && deleted.isEmpty) {
            // Built on the context's queue and delivered synchronously on it.
            let info = UncheckedSendable(graph.announced.userInfo(inserted: inserted, updated: updated, deleted: deleted))
            NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info.value)
        }
        // Objects inserted and deleted in between are named too: a controller may have shown them.
        tellGraphObservers(GraphChange(objects: changed, isOwnEdits: true))
        // The next event's changes count from here (`changedValuesForCurrentEvent()`); a save's
        // event needs no base: the save makes the values the committed row.
        if !graph.isSaving {
            for object in changed where object.belongs(to: self) && !object.isFaultFlag { object.state.endEvent() }
        }
    }

    /// Gives permanent IDs to objects that still have temporary ones (before a save, e.g. to pass
    /// their IDs to another context). Each object's ID names the store it will be saved to: the
    /// first store that holds its entity.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws(CoreDataError) {
        checkQueue("obtainPermanentIDs(for:)")
        try obtainPermanentIDs(forTemporary: objects.filter(\.objectID.isTemporaryID), in: nil)
    }

    /// Chooses the store a new object is saved to, when several stores hold its entity (it goes
    /// to the first otherwise). Mirrors `assign(_:to:)`; call it before the object's first save.
    /// Throws when the object is already saved (or has its permanent ID in another store) or
    /// when the store's configuration does not hold the object's entity.
    public func assign(_ object: ManagedObject, to store: PersistentStore) throws(CoreDataError) {
        checkQueue("assign(_:to:)")
        let coordinator = try requireCoordinator()
        guard coordinator.persistentStore(withIdentifier: store.identifier) === store else {
            throw CoreDataError(.persistentStoreOperation, "assign(_:to:) names a store that is not added to this context's coordinator.")
        }
        guard try coordinator.stores(holding: object.entity).contains(where: { $0 === store }) else {
            throw CoreDataError(.persistentStoreOperation, """
                The store \(store.identifier) (configuration \(store.configurationName ?? "default")) does not \
                hold the entity \(object.entity.name); assign the object to a store whose configuration \
                includes it.
                """)
        }
        if object.objectID.storeNumber == store.number { return }
        guard object.objectID.isTemporaryID, object.isInsertedFlag else {
            throw CoreDataError(.persistentStoreOperation, """
                \(object.entity.name) \(object.objectID.uriRepresentation().absoluteString) already belongs to \
                a store; only objects inserted and not yet given a permanent ID can be assigned to one.
                """)
        }
        try obtainPermanentIDs(forTemporary: [object], in: store)
    }

    /// Gives `temporary` (objects that all have a temporary ID) permanent IDs in `store`, or in
    /// the store that holds each entity.
    package func obtainPermanentIDs(forTemporary temporary: [ManagedObject], in store: PersistentStore?) throws(CoreDataError) {
        let coordinator = try requireCoordinator()
        guard !temporary.isEmpty else { return }
        let ids = try coordinator.obtainPermanentIDs(for: temporary.map(\.entity), in: store)
        graph.reserveRegistry(ids.count)
        var map: [ManagedObjectID: ManagedObjectID] = [:]
        let remember = hasChildren
        // With no child left, nobody can still use a retired temporary ID: forget them all.
        if !remember { graph.retiredTemporaryIDs = [:] }
        for (object, id) in zip(temporary, ids) {
            if remember { graph.retiredTemporaryIDs[object.objectID] = id }
            if !object.entity.toOneRelationships.isEmpty || !object.entity.toManyRelationships.isEmpty { map[object.objectID] = id }
            object.objectID = id
            graph.register(object, as: id)
        }
        remapRelationships(map)
        // A permanent key decides the order of equal results differently.
        tellGraphObservers(GraphChange(rechecked: temporary))
    }

    /// The same ID in terms of this context's model (an ID may come from another coordinator,
    /// with its own model instance, on the same store file).
    package func localize(_ id: ManagedObjectID) -> ManagedObjectID {
        if id.isTemporaryID, let permanent = graph.retiredTemporaryIDs[id] { return permanent }
        let entity = modelEntity(for: id.entity)
        return entity === id.entity ? id : ManagedObjectID(entity: entity, storeNumber: id.storeNumber, key: id.key)
    }

    /// The context's model's entity matching `entity` (the same object, or the one with its name).
    package func modelEntity(for entity: EntityDescription) -> EntityDescription {
        if let model = persistentStoreCoordinator?.managedObjectModel, entity.managedObjectModel !== model,
           let own = model.entitiesByName[entity.name] {
            return own
        }
        return entity
    }

    /// Loads the committed row of an object: from the row cache when it is recent enough for
    /// ``stalenessInterval`` (and `fresh` is false), else from the store.
    package func loadRow(for objectID: ManagedObjectID, fresh: Bool = false) throws(CoreDataError) -> RowSnapshot? {
        if let parent {
            // A child reads through its parent, which may hold unsaved changes of the object.
            let result = parent.performAndWait { () -> Result<RowSnapshot?, CoreDataError> in
                do throws(CoreDataError) { return .success(try parent.currentRow(for: objectID, fresh: fresh)) } catch { return .failure(error) }
            }
            return try result.get()
        }
        guard !objectID.isTemporaryID else { return nil }
        let staleness = stalenessInterval
        let coordinator = try requireCoordinator()
        return try reading { () throws(CoreDataError) in
            try coordinator.row(for: objectID, maximumAge: fresh ? 0 : (staleness < 0 ? nil : staleness))
        }
    }
}
