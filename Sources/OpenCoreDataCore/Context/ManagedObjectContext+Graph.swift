import Foundation

// The object graph: relationship reads and writes with inverse maintenance, and delete
// propagation. Everything here runs on the context's queue and works on IDs: a to-one is the
// destination's ID in a value slot, a to-many a `ToManyState` of IDs; objects are looked up
// (as faults when not registered) only where a caller needs them.
extension ManagedObjectContext {
    // MARK: - Reading

    /// The destination ID of a to-one, or `nil`.
    package func destination(of object: ManagedObject, _ relationship: RelationshipDescription) -> ManagedObjectID? {
        guard let slot = object.entity.toOneSlotByName[relationship.name] else { return nil }
        if case .object(let id) = object.readValue(slot: slot) { return id }
        return nil
    }

    /// The current members of a to-many, loading the committed ones on first use.
    package func members(of object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) -> [ManagedObjectID] {
        let index = try toManyIndex(of: object, relationship)
        if !object.toMany[index].isLoaded {
            do {
                object.toMany[index].load(try committedMembers(of: object.objectID, relationship))
            } catch {
                relationshipReadFailure = error
                throw error
            }
        }
        return object.toMany[index].members ?? []
    }

    /// The destinations of a relationship of either kind (none when they cannot be loaded: a
    /// row gone from the store has nothing to update).
    package func destinations(of object: ManagedObject, _ relationship: RelationshipDescription) -> [ManagedObjectID] {
        if relationship.isToMany { return (try? members(of: object, relationship)) ?? [] }
        return destination(of: object, relationship).map { [$0] } ?? []
    }

    /// The members a to-many has outside this context: from the parent context (with its
    /// unsaved changes) or from the store.
    private func committedMembers(of id: ManagedObjectID, _ relationship: RelationshipDescription) throws(CoreDataError) -> [ManagedObjectID] {
        if let parent {
            let result = parent.performAndWait { () -> Result<[ManagedObjectID], CoreDataError> in
                do throws(CoreDataError) {
                    let id = parent.localize(id)
                    if let object = parent.graph.registered(id) ?? parent.insertedObject(for: id), !object.isDeletedFlag {
                        return .success(try parent.members(of: object, relationship))
                    }
                    return .success(try parent.committedMembers(of: id, relationship))
                } catch { return .failure(error) }
            }
            return try result.get()
        }
        guard !id.isTemporaryID else { return [] }
        let coordinator = try requireCoordinator()
        return try reading { () throws(CoreDataError) in try coordinator.related(relationship, of: id) }
    }

    /// The index of a to-many among an object's states (made on first use), or `nil`.
    package func toManyStateIndex(of object: ManagedObject, _ relationship: RelationshipDescription) -> Int? {
        try? toManyIndex(of: object, relationship)
    }

    /// The index of a to-many among the object's states (creating them on first use: empty and
    /// loaded for new objects, which have no stored members).
    private func toManyIndex(of object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) -> Int {
        guard let index = object.entity.toManyIndexByName[relationship.name] else {
            throw CoreDataError(.coreData, "The entity \(object.entity.name) has no to-many relationship named '\(relationship.name)'.",
                                key: relationship.name)
        }
        if object.toMany.isEmpty {
            let fresh = object.isInsertedFlag && object.objectID.isTemporaryID
            object.toMany = Array(repeating: fresh ? .empty : ToManyState(), count: object.entity.toManyRelationships.count)
        }
        return index
    }

    // MARK: - Writing, keeping inverses

    /// Sets a to-one and updates the inverse of the old and the new destination.
    package func setDestination(of object: ManagedObject, _ relationship: RelationshipDescription, to newID: ManagedObjectID?) throws(CoreDataError) {
        let oldID = destination(of: object, relationship)
        guard oldID != newID else { return }
        writeToOne(object, relationship, newID)
        guard let inverse = relationship.inverseRelationship else { return }
        if let oldID { try unlink(self.object(with: oldID), inverse, from: object.objectID) }
        if let newID { try link(self.object(with: newID), inverse, to: object) }
    }

    /// Adds a destination to a to-many and updates its inverse.
    package func addMember(_ member: ManagedObject, to object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) {
        guard try insertID(member.objectID, into: object, relationship) else { return }
        if let inverse = relationship.inverseRelationship { try link(member, inverse, to: object) }
    }

    /// Removes a destination from a to-many and updates its inverse.
    package func removeMember(_ memberID: ManagedObjectID, from object: ManagedObject,
                              _ relationship: RelationshipDescription) throws(CoreDataError) {
        guard try removeID(memberID, from: object, relationship) else { return }
        if let inverse = relationship.inverseRelationship { try unlink(self.object(with: memberID), inverse, from: object.objectID) }
    }

    /// Makes the members of an object's to-many `objects`, in that order for an ordered one:
    /// removed members leave the inverse, added ones join it.
    package func setMembers(_ objects: [ManagedObject], of object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) {
        let current = try members(of: object, relationship)
        var wanted: [ManagedObjectID] = []
        var seen = Set<ManagedObjectID>()
        for member in objects where seen.insert(member.objectID).inserted { wanted.append(member.objectID) }
        for id in current where !seen.contains(id) { try removeMember(id, from: object, relationship) }
        let existing = Set(current)
        for member in objects where !existing.contains(member.objectID) { try addMember(member, to: object, relationship) }
        guard relationship.isOrdered else { return }
        let index = try toManyIndex(of: object, relationship)
        markToManyChanged(object, index: index) { state in
            let before = state.members
            state.reorder(wanted)
            guard let after = state.members, after != before else { return false }
            if let before { undoStorage?.record(.order(object, toMany: index, old: before, new: after)) }
            return true
        }
    }

    /// Undo and redo: puts one member in or out of a to-many, leaving the inverse to its own record.
    package func replayMembership(of id: ManagedObjectID, in object: ManagedObject, toMany index: Int, present: Bool) {
        guard index < object.entity.toManyRelationships.count, (try? toManyIndex(of: object, object.entity.toManyRelationships[index])) != nil else {
            return
        }
        markToManyChanged(object, index: index) { present ? $0.insert(id) : $0.remove(id) }
    }

    /// Undo and redo: puts the members of an ordered to-many back in an order.
    package func replayOrder(_ order: [ManagedObjectID], of object: ManagedObject, toMany index: Int) {
        guard index < object.toMany.count else { return }
        markToManyChanged(object, index: index) { state in
            let before = state.members
            state.reorder(order)
            return state.members != before
        }
    }

    /// Makes `target.inverse` include `source` (the other side already points at `target`).
    private func link(_ target: ManagedObject, _ inverse: RelationshipDescription, to source: ManagedObject) throws(CoreDataError) {
        if inverse.isToMany {
            try insertID(source.objectID, into: target, inverse)
            return
        }
        // A to-one inverse: the target leaves its previous partner, whose side forgets it.
        let previous = destination(of: target, inverse)
        guard previous != source.objectID else { return }
        writeToOne(target, inverse, source.objectID)
        if let previous, let back = inverse.inverseRelationship {
            let old = object(with: previous)
            if back.isToMany {
                try removeID(target.objectID, from: old, back)
            } else if destination(of: old, back) == target.objectID {
                writeToOne(old, back, nil)
            }
        }
    }

    /// Makes `target.inverse` stop including `sourceID`.
    private func unlink(_ target: ManagedObject, _ inverse: RelationshipDescription, from sourceID: ManagedObjectID) throws(CoreDataError) {
        if inverse.isToMany {
            try removeID(sourceID, from: target, inverse)
        } else if destination(of: target, inverse) == sourceID {
            writeToOne(target, inverse, nil)
        }
    }

    /// Adds an ID to one side of a to-many (the caller keeps the inverse); returns whether the
    /// membership changed.
    @discardableResult
    private func insertID(_ id: ManagedObjectID, into object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) -> Bool {
        let index = try toManyIndex(of: object, relationship)
        guard object.toMany[index].contains(id) != true else { return false }
        markToManyChanged(object, index: index) { $0.insert(id) }
        undoStorage?.record(.member(object, toMany: index, id, added: true))
        return true
    }

    /// Removes an ID from one side of a to-many (the caller keeps the inverse); returns whether
    /// the membership may have changed (unknown members of an unloaded state count as changed).
    @discardableResult
    private func removeID(_ id: ManagedObjectID, from object: ManagedObject, _ relationship: RelationshipDescription) throws(CoreDataError) -> Bool {
        let index = try toManyIndex(of: object, relationship)
        guard object.toMany[index].contains(id) != false else { return false }
        markToManyChanged(object, index: index) { $0.remove(id) }
        undoStorage?.record(.member(object, toMany: index, id, added: false))
        return true
    }

    private func writeToOne(_ object: ManagedObject, _ relationship: RelationshipDescription, _ id: ManagedObjectID?) {
        guard let slot = object.entity.toOneSlotByName[relationship.name] else { return }
        object.writeValue(id.map { .object($0) } ?? .null, slot: slot)
    }

    private func markToManyChanged(_ object: ManagedObject, index: Int, _ change: (inout ToManyState) -> Bool) {
        object.willAccessValue()
        guard change(&object.toMany[index]) else { return }
        object.state.markToManyChanged(index, slotCount: object.entity.valueSlotCount)
        graph.objectDidChange(object)
        object.observedChange(object.entity.valueSlotCount + index)
    }

    // MARK: - Parent and child

    /// A child's to-many changes, applied as they are (the child already kept both sides
    /// consistent, and both sides are pushed).
    package func applyToManyChanges(_ changes: [Int: (added: [ManagedObjectID], removed: [ManagedObjectID])], to object: ManagedObject) {
        guard !changes.isEmpty, !object.entity.toManyRelationships.isEmpty else { return }
        for (index, change) in changes {
            guard index < object.entity.toManyRelationships.count,
                  let stateIndex = try? toManyIndex(of: object, object.entity.toManyRelationships[index]) else { continue }
            markToManyChanged(object, index: stateIndex) { state in
                var changed = false
                for id in change.removed { changed = state.remove(id) || changed }
                for id in change.added { changed = state.insert(id) || changed }
                return changed
            }
        }
    }

    // MARK: - Predicates

    /// The graph as this context sees it, unsaved changes included (on the context's queue).
    package struct CurrentGraph: GraphResolver {
        unowned let context: ManagedObjectContext
        package func values(of id: ManagedObjectID) -> [ManagedValue]? {
            let object = context.object(with: id)
            if object.isDeletedFlag { return nil }
            // A fault whose row is gone has no values (instead of trapping as a fault would).
            if object.isFaultFlag, (try? context.loadRow(for: id)) == nil { return nil }
            object.willAccessValue()
            return object.values
        }
        package func members(_ relationship: RelationshipDescription, of id: ManagedObjectID) -> [ManagedObjectID] {
            let object = context.object(with: id)
            return ((try? context.members(of: object, relationship)) ?? []).filter { !context.object(with: $0).isDeletedFlag }
        }
    }

    /// Whether an object of this context matches a bound predicate (relationships as this context
    /// sees them).
    package func evaluate(_ predicate: BoundPredicate, on object: ManagedObject, as entity: EntityDescription? = nil) -> Bool {
        object.willAccessValue()
        let values = entity.map { $0.adapt(object.values, from: object.entity) } ?? object.values
        return predicate.evaluate(EvaluationSubject(values: values, primaryKey: object.objectID.primaryKey, id: object.objectID,
                                                    graph: CurrentGraph(context: self)))
    }

    // MARK: - Deleting

    /// Applies the delete rules of newly deleted objects: cascade deletes the destinations,
    /// nullify removes the object from their inverse, deny and no action leave them (deny is
    /// checked at save). Runs in `processPendingChanges()`.
    package func propagateDeletes(_ deleted: [ManagedObject]) {
        for object in deleted where object.isDeletedFlag && object.belongs(to: self) {
            prepareDeletion(of: object)
            guard object.isDeletedFlag else { continue }    // prepareForDeletion may take it back (undo)
            for relationship in object.entity.propagatingRelationships {
                for id in destinations(of: object, relationship) {
                    let target = self.object(with: id)
                    // A cascaded object is prepared while it still points back at this one.
                    if relationship.deleteRule == .cascade, !target.isDeletedFlag, rowExists(target) {
                        delete(target)
                        prepareDeletion(of: target)
                    }
                    if let inverse = relationship.inverseRelationship, rowExists(target) {
                        try? unlink(target, inverse, from: object.objectID)
                    }
                }
            }
        }
    }

    /// Whether an object can be loaded (new, loaded, or its row exists).
    private func rowExists(_ object: ManagedObject) -> Bool {
        guard object.isFaultFlag else { return true }
        return (try? loadRow(for: object.objectID)) != nil
    }

    // MARK: - Saving

    /// Replaces temporary IDs in relationships of the pending objects (after they got
    /// permanent IDs).
    package func remapRelationships(_ map: [ManagedObjectID: ManagedObjectID]) {
        guard !map.isEmpty else { return }
        for object in graph.pending.all where object.belongs(to: self) && !object.isFaultFlag {
            object.state.remap(map, relationshipSlots: object.entity.storedAttributes.count..<object.entity.valueSlotCount)
        }
    }

    /// The new member order of every changed ordered relationship of `objects`.
    package func orderChanges(of objects: some Sequence<ManagedObject>) -> [StoreSaveRequest.OrderChange] {
        var changes: [StoreSaveRequest.OrderChange] = []
        for object in objects where !object.toMany.isEmpty && !object.isDeletedFlag {
            guard let source = object.objectID.primaryKey else { continue }
            for (index, relationship) in object.entity.toManyRelationships.enumerated()
                where relationship.isOrdered && object.toMany[index].hasChanges {
                // The whole order is written, so the committed members are needed.
                guard let members = try? members(of: object, relationship) else { continue }
                changes.append(.init(relationship: relationship, source: source, members: members.compactMap(\.primaryKey)))
            }
        }
        return changes
    }

    /// The join-table rows a save adds and removes (many-to-many changes of `objects`).
    package func joinChanges(of objects: some Sequence<ManagedObject>) -> [StoreSaveRequest.JoinChange] {
        var changes = Set<StoreSaveRequest.JoinChange>()
        for object in objects where !object.toMany.isEmpty {
            guard let source = object.objectID.primaryKey else { continue }
            for (index, relationship) in object.entity.toManyRelationships.enumerated() {
                guard let inverse = relationship.inverseRelationship, inverse.isToMany, object.toMany[index].hasChanges else { continue }
                let state = object.toMany[index]
                // One row per pair: written from the side whose relationship sorts first.
                let canonical = ObjectIdentifier(relationship) < ObjectIdentifier(inverse)
                func change(_ id: ManagedObjectID, _ isInsert: Bool) -> StoreSaveRequest.JoinChange? {
                    guard let destination = id.primaryKey else { return nil }
                    return canonical
                        ? .init(relationship: relationship, source: source, destination: destination, isInsert: isInsert)
                        : .init(relationship: inverse, source: destination, destination: source, isInsert: isInsert)
                }
                for id in state.added { if let c = change(id, true) { changes.insert(c) } }
                for id in state.removed { if let c = change(id, false) { changes.insert(c) } }
            }
        }
        return changes.sorted { !$0.isInsert && $1.isInsert }   // removals first
    }
}
