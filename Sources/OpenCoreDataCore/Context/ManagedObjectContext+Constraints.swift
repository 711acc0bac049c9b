import Foundation

// Uniqueness constraints at save: conflicts among the objects being saved and with stored
// rows, and their resolution by the built-in merge policies. On the context's queue.
extension ManagedObjectContext {
    /// The constraint conflicts of the pending inserts and changes. Rows are looked up in the
    /// store (one query per 500 values of a single-property constraint; one per object for a
    /// compound one); the store's unique index backs this check against concurrent writers.
    func findConstraintConflicts() throws -> [ConstraintConflict] {
        guard persistentStoreCoordinator?.managedObjectModel.hasUniquenessConstraints == true else { return [] }
        let changed = graph.pending.liveChanged(in: self)
        let saving = graph.pending.liveInserted(in: self) + changed.filter { !$0.isDeletedFlag && !$0.isFaultFlag }
        var groups: [String: (entity: EntityDescription, constraint: [String], objects: [ManagedObject])] = [:]
        for object in saving {
            var current: EntityDescription? = object.entity
            while let entity = current {
                for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                    let slots = constraint.compactMap { object.entity.valueSlot(named: $0) }
                    guard slots.count == constraint.count else { continue }
                    if !object.isInsertedFlag && !slots.contains(where: object.dirty.contains) { continue }
                    groups["\(entity.name)|\(constraint.joined(separator: ","))", default: (entity, constraint, [])].objects.append(object)
                }
                current = entity.superentity
            }
        }
        guard !groups.isEmpty else { return [] }
        let deletedKeys = Set(changed.filter(\.isDeletedFlag).compactMap(\.objectID.primaryKey))
        var conflicts: [ConstraintConflict] = []
        for (_, group) in groups.sorted(by: { $0.key < $1.key }) {
            let key = { (object: ManagedObject) in object.entity.values(named: group.constraint, in: object.values) }
            var byKey: [[ManagedValue]: [ManagedObject]] = [:]
            var order: [[ManagedValue]] = []
            for object in group.objects {
                let values = key(object)
                guard !values.contains(where: \.isNull) else { continue }   // NULLs never collide (as in SQLite)
                if byKey[values] == nil { order.append(values) }
                byKey[values, default: []].append(object)
            }
            let stored = try storedRows(of: group.entity, constraint: group.constraint, keys: order)
            let savingByKey = Dictionary(group.objects.compactMap { object in object.objectID.primaryKey.map { ($0, object) } },
                                         uniquingKeysWith: { a, _ in a })
            for values in order {
                let objects = byKey[values] ?? []
                // A stored row conflicts unless it is one of these objects, is being deleted, or is
                // being saved with other values.
                let row = stored[values]?.first { row in
                    !deletedKeys.contains(row.primaryKey) && !objects.contains { $0.objectID.primaryKey == row.primaryKey }
                        && savingByKey[row.primaryKey].map { key($0) == values } ?? true
                }
                guard objects.count > 1 || row != nil else { continue }
                let rowID = row.flatMap { row in
                    persistentStoreCoordinator.flatMap { try? $0.store(for: row.entity) }.map { ManagedObjectID.permanent(row.entity, store: $0.identifier, primaryKey: row.primaryKey) }
                }
                let conflict = ConstraintConflict(
                    constraint: group.constraint,
                    databaseObject: rowID.map { object(with: $0) },
                    databaseSnapshot: row.map { $0.entity.namedValues($0.snapshot.values) },
                    conflictingObjects: objects,
                    conflictingSnapshots: objects.map { $0.entity.namedValues($0.values) })
                conflict.persisted = row
                conflicts.append(conflict)
            }
        }
        return conflicts
    }

    /// Stored rows of `entity` (and its sub-entities) whose constraint values are among `keys`,
    /// in the store new objects of the entity go to (uniqueness holds per store, as each store's
    /// index enforces it).
    private func storedRows(of entity: EntityDescription, constraint: [String], keys: [[ManagedValue]]) throws -> [[ManagedValue]: [StoreRow]] {
        guard !keys.isEmpty, parent == nil, let coordinator = persistentStoreCoordinator else { return [:] }
        let slots = constraint.compactMap { entity.valueSlot(named: $0) }
        var predicates: [BoundPredicate] = []
        if slots.count == 1 {
            for start in stride(from: 0, to: keys.count, by: 500) {
                predicates.append(.isIn(slot: slots[0], values: keys[start..<min(start + 500, keys.count)].map { $0[0] }))
            }
        } else {
            predicates = keys.map { values in .and(zip(slots, values).map { .compare(slot: $0, op: .equal, value: $1) }) }
        }
        var result: [[ManagedValue]: [StoreRow]] = [:]
        let store = try coordinator.store(for: entity)
        for predicate in predicates {
            let rows = try coordinator.fetch(StoreFetchRequest(entity: entity, predicate: predicate), from: store)
            for row in rows {
                let values = row.entity.values(named: constraint, in: row.snapshot.values)
                result[values, default: []].append(row)
            }
        }
        return result
    }

    /// Resolves one conflict the built-in way: one object survives (the newest when the object
    /// wins, else the oldest), the others leave the save, and the survivor takes over the stored
    /// row, with its own values or the stored ones.
    package func resolve(_ conflict: ConstraintConflict, keepingObjectValues objectWins: Bool) {
        let objects = conflict.conflictingObjects.filter { $0.belongs(to: self) }
        guard let survivor = objectWins ? objects.last : objects.first else { return }
        for loser in objects where loser !== survivor {
            if loser.isInsertedFlag {
                forgetInsert(loser)
            } else {
                refresh(loser, mergeChanges: false)
            }
        }
        guard let row = conflict.persisted else { return }
        guard survivor.isInsertedFlag, let store = try? persistentStoreCoordinator?.store(for: row.entity) else {
            // An existing object collides with another row: the row goes (object wins) or the
            // object's changes do (store wins).
            if objectWins, let database = conflict.databaseObject { delete(database) } else { refresh(survivor, mergeChanges: false) }
            return
        }
        let rowID = ManagedObjectID.permanent(row.entity, storeNumber: store.number, primaryKey: row.primaryKey)
        // The survivor becomes the stored object: an update of that row.
        if let existing = graph.registered(rowID), existing !== survivor {
            graph.unregister(existing)
            existing.managedObjectContext = nil
        }
        let oldID = survivor.objectID
        graph.unregister(id: oldID)
        survivor.objectID = rowID
        graph.register(survivor, as: rowID)
        remapRelationships([oldID: rowID])
        survivor.state.becomeStored(as: row.snapshot, keepingValues: objectWins, toManyBase: survivor.entity.valueSlotCount)
        graph.compactInserted(in: self)
        graph.holdChanged(survivor)
    }

    /// Drops an inserted object from the context, as if it had never been inserted.
    private func forgetInsert(_ object: ManagedObject) {
        graph.unregister(object)
        object.state.forgetInsert()
        object.managedObjectContext = nil
        graph.compactInserted(in: self)
    }
}

extension EntityDescription {
    /// Values by property name (attributes and to-one IDs), `NSNull` for nil.
    package func namedValues(_ values: [ManagedValue]) -> [String: Any] {
        var result = dictionary(from: values)
        for (offset, relationship) in toOneRelationships.enumerated() where storedAttributes.count + offset < values.count {
            result[relationship.name] = values[storedAttributes.count + offset].anyValue(for: .objectID) ?? NSNull()
        }
        return result
    }
}
