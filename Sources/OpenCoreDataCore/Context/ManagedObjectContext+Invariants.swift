import Foundation

// The object graph's invariants: what must hold between the registry, the pending changes, each
// object's state and the inverse relationships whenever the context's queue is between two
// public operations. Tests call `invariantViolations()` after each step of random sequences of
// operations; a broken invariant is a bug in the library, never in the caller's code.
extension ManagedObjectContext {
    /// Whether contexts check their invariants after every `perform` / `performAndWait` block
    /// (`OCD_CHECK_INVARIANTS=1`; CI runs the tests so). The check costs time proportional to
    /// the objects a context holds; a broken invariant stops the process with what broke (a bug
    /// in OpenCoreData, never in the caller's code: please report it).
    package static let checksInvariants = ProcessInfo.processInfo.environment["OCD_CHECK_INVARIANTS"] == "1"

    /// Stops the process when an invariant is broken (with `OCD_CHECK_INVARIANTS=1`).
    package func checkInvariantsIfEnabled() {
        guard Self.checksInvariants else { return }
        let violations = invariantViolations()
        guard violations.isEmpty else {
            preconditionFailure("""
                OpenCoreData broke its object graph's invariants in context '\(debugName)' (a bug in \
                OpenCoreData; please report it): \(violations.prefix(10).joined(separator: "; "))
                """)
        }
    }

    /// Every invariant of the context's object graph that does not hold now, described; empty
    /// when all hold. Runs on the context's queue; reads only what is in memory (no faulting, no
    /// I/O), so checking does not change what it checks.
    package func invariantViolations() -> [String] {
        var violations: [String] = []
        func fail(_ object: ManagedObject, _ message: String) {
            violations.append("\(object.entity.name) \(object.objectID): \(message)")
        }

        // Registry: keyed by each object's own ID, pointing back at this context; temporary IDs
        // are found through the pending inserts, not the registry.
        for object in graph.registry.misfiledObjects { fail(object, "registered under another ID") }
        for object in graph.registry.objects {
            if graph.registered(object.objectID) !== object { fail(object, "registered twice, or not found under its own ID") }
            if !object.belongs(to: self) { fail(object, "registered in a context it does not point at") }
        }
        let inserted = graph.pending.liveInserted(in: self)
        let changed = graph.pending.liveChanged(in: self)
        let heldInserted = Set(inserted.map(ObjectIdentifier.init))
        let heldChanged = Set(changed.map(ObjectIdentifier.init))
        if heldChanged.count != changed.count {
            for object in changed where changed.count(where: { $0 === object }) > 1 { fail(object, "listed twice among the pending changes") }
        }
        var temporaryIDs = Set<ManagedObjectID>()
        for object in inserted {
            if object.objectID.isTemporaryID {
                if !temporaryIDs.insert(object.objectID).inserted { fail(object, "inserted twice") }
                if graph.registered(object.objectID) != nil { fail(object, "a temporary ID in the registry") }
            } else if graph.registered(object.objectID) !== object {
                fail(object, "inserted with a permanent ID but not registered under it")
            }
        }
        for object in changed where graph.registered(object.objectID) !== object && !object.isDeletedFlag {
            fail(object, "changed but not registered")
        }

        // Each object's state.
        let objects = inserted + changed + graph.registry.objects.filter {
            !heldInserted.contains(ObjectIdentifier($0)) && !heldChanged.contains(ObjectIdentifier($0))
        }
        for object in objects {
            let identity = ObjectIdentifier(object)
            if object.state.phase == .detached { fail(object, "held by a context but in no context's phase") }
            if object.isFaultFlag {
                if object.hasDirtySlots { fail(object, "a fault with changed values") }
                if object.toMany.contains(where: \.hasChanges) { fail(object, "a fault with changed relationships") }
            } else if object.values.count != object.entity.valueSlotCount {
                fail(object, "\(object.values.count) values for \(object.entity.valueSlotCount) slots")
            }
            if object.isInsertedFlag && !object.isDeletedFlag {
                if !heldInserted.contains(identity) { fail(object, "inserted but not among the pending inserts") }
            } else if object.hasChanges && !object.isInsertedFlag && !heldChanged.contains(identity) {
                fail(object, "changed but not among the pending changes")
            }
            if object.isInsertedFlag && !object.isDeletedFlag && object.snapshot != nil && object.objectID.isTemporaryID {
                fail(object, "inserted with a committed snapshot")
            }
            if !object.isFaultFlag, !object.isDeletedFlag, !object.isInaccessibleFlag {
                checkInverses(of: object, fail: fail)
            }
        }
        return violations
    }

    /// Relationship ends agree where both are in memory: a to-one's destination lists the object
    /// in its inverse (or points back), and a loaded to-many's members point back.
    private func checkInverses(of object: ManagedObject, fail: (ManagedObject, String) -> Void) {
        func loadedObject(_ id: ManagedObjectID) -> ManagedObject? {
            guard let other = graph.registered(id) ?? insertedObject(for: id), !other.isFaultFlag, !other.isDeletedFlag else { return nil }
            return other
        }
        /// Why `other`'s `inverse` does not lead back to `object`; nil when it does, or when that
        /// end is not in memory.
        func mismatch(_ other: ManagedObject, _ inverse: RelationshipDescription) -> String? {
            if inverse.isToMany {
                guard let index = other.entity.toManyIndexByName[inverse.name], index < other.toMany.count,
                      other.toMany[index].contains(object.objectID) == false else { return nil }
                return "does not hold it"
            }
            let back = destination(of: other, inverse)
            return back == object.objectID ? nil : "is \(back.map { "\($0)" } ?? "nil")"
        }
        for relationship in object.entity.toOneRelationships {
            guard let inverse = relationship.inverseRelationship, let id = destination(of: object, relationship), let other = loadedObject(id),
                  let reason = mismatch(other, inverse) else { continue }
            fail(object, "'\(relationship.name)' is \(id), whose '\(inverse.name)' \(reason)")
        }
        for (index, relationship) in object.entity.toManyRelationships.enumerated() {
            guard index < object.toMany.count, let members = object.toMany[index].members, let inverse = relationship.inverseRelationship else {
                continue
            }
            for id in members {
                guard let other = loadedObject(id), let reason = mismatch(other, inverse) else { continue }
                fail(object, "'\(relationship.name)' holds \(id), whose '\(inverse.name)' \(reason)")
            }
        }
    }
}
