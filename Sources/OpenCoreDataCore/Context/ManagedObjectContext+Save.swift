import Foundation

extension ManagedObjectContext {
    /// Writes the context's unsaved changes to its store in one transaction.
    ///
    /// Inserted objects get permanent IDs; every changed or deleted object's version is checked
    /// against the store (optimistic locking). On a conflict nothing is written and a
    /// ``CoreDataError`` with code 133020 lists the ``CoreDataError/conflicts``; the context keeps
    /// its changes. Missing mandatory values fail with 1570 (several errors: 1560). A successful
    /// save posts `.NSManagedObjectContextDidSave` on the context's queue.
    public func save() throws {
        checkQueue("save()")
        processPendingChanges()
        // Inserted objects first, in insertion order: their keys are allocated in that order and
        // rows are appended to the table in key order.
        let changed = pending.liveInserted(in: self) + pending.liveChanged(in: self)
        guard !changed.isEmpty else {
            for object in pending.all { object.isPendingFlag = false }
            pending.removeAll()
            return
        }
        if parent != nil {
            throw CoreDataError(.coreData, "Saving a child context into its parent is not supported yet; give context '\(debugName)' the persistent store coordinator instead of a parent.")
        }
        let coordinator = try requireCoordinator()
        try validateForSave(changed)

        let needIDs = changed.filter { $0.isInsertedFlag && $0.objectID.isTemporaryID }
        if !needIDs.isEmpty { try obtainPermanentIDs(for: needIDs) }

        var request = StoreSaveRequest()
        request.inserts.reserveCapacity(changed.count)
        var inserted: [ManagedObject] = [], updated: [ManagedObject] = [], deleted: [ManagedObject] = []
        for object in changed {
            guard let pk = object.objectID.primaryKey else { continue }
            if object.isInsertedFlag {
                request.inserts.append(.init(entity: object.entity, primaryKey: pk, values: object.values))
                inserted.append(object)
            } else if object.isDeletedFlag {
                if object.isFaultFlag { object.willAccessValue() }
                request.deletes.append(.init(entity: object.entity, primaryKey: pk, expectedVersion: object.snapshot?.version ?? 0))
                deleted.append(object)
            } else if !object.dirty.isEmpty {
                request.updates.append(.init(entity: object.entity, primaryKey: pk, expectedVersion: object.snapshot?.version ?? 0,
                                             slots: object.dirty.slots, values: object.values))
                updated.append(object)
            }
        }
        let store = try coordinator.store(for: changed[0].entity)
        let conflicts: [StoreConflict]
        do { conflicts = try coordinator.save(request, store: store) } catch { throw PersistentStoreCoordinator.wrap(error) }
        guard conflicts.isEmpty else { throw mergeError(conflicts, store: store) }

        for object in inserted {
            object.snapshot = RowSnapshot(values: object.values, version: 1)
            object.isInsertedFlag = false
            object.dirty.removeAll()
            object.isPendingFlag = false
        }
        for object in updated {
            object.snapshot = RowSnapshot(values: object.values, version: (object.snapshot?.version ?? 0) + 1)
            object.dirty.removeAll()
            object.isPendingFlag = false
        }
        for object in deleted {
            unregister(object)
            object.managedObjectContext = nil
        }
        for object in pending.all { object.isPendingFlag = false }
        pending.removeAll()
        // Built and delivered on the context's queue.
        let info = UncheckedSendable([
            NSInsertedObjectsKey: Set(inserted), NSUpdatedObjectsKey: Set(updated), NSDeletedObjectsKey: Set(deleted),
        ])
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: info.value)
    }

    /// Checks mandatory values of inserted and updated objects.
    private func validateForSave(_ objects: [ManagedObject]) throws {
        var errors: [CoreDataError] = []
        for object in objects where !object.isDeletedFlag && !object.isFaultFlag {
            for (slot, attribute) in object.entity.storedAttributes.enumerated() where !attribute.isOptional && object.values[slot].isNull {
                errors.append(CoreDataError(
                    .validationMissingMandatoryProperty,
                    "The attribute '\(attribute.name)' of \(object.entity.name) \(object.objectID) is mandatory and has no value. Set it before saving, or make it optional.",
                    key: attribute.name, affectedObjectIDs: [object.objectID]))
            }
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw CoreDataError(.validationMultipleErrors, "Multiple validation errors occurred; see underlyingErrors.",
                                affectedObjectIDs: errors.flatMap(\.affectedObjectIDs), underlyingErrors: errors)
        }
    }

    private func mergeError(_ conflicts: [StoreConflict], store: PersistentStore) -> CoreDataError {
        var result: [MergeConflict] = []
        var ids: [ManagedObjectID] = []
        for conflict in conflicts {
            let id = ManagedObjectID.permanent(conflict.entity, store: store.identifier, primaryKey: conflict.primaryKey)
            ids.append(id)
            guard let object = registry[id] else { continue }
            let attributes = conflict.entity.storedAttributes
            func dictionary(_ values: [ManagedValue]?) -> [String: Any]? {
                guard let values else { return nil }
                var result: [String: Any] = [:]
                for (slot, attribute) in attributes.enumerated() { result[attribute.name] = values[slot].anyValue(for: attribute.attributeType) ?? NSNull() }
                return result
            }
            let cached = persistentStoreCoordinator?.rowCache.snapshot(for: id)
            result.append(MergeConflict(
                sourceObject: object,
                objectSnapshot: dictionary(object.snapshot?.values),
                cachedSnapshot: dictionary(cached?.values),
                persistedSnapshot: dictionary(conflict.current?.values),
                oldVersionNumber: Int(conflict.expectedVersion),
                newVersionNumber: Int(conflict.current?.version ?? 0)))
        }
        return CoreDataError(.managedObjectMerge, "Could not merge changes. \(conflicts.count) object(s) changed in the store since this context read them; refresh them or set a merge policy.",
                             affectedObjectIDs: ids, conflicts: result)
    }
}
