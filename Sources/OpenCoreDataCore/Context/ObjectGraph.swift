import Foundation

/// A context's object graph: the registered objects, the objects with unsaved changes, the
/// changes not processed yet and the temporary IDs its saves retired. One value, owned by the
/// context's queue (every method of the context that touches it runs there; checked under
/// concurrency debugging). Each object's own state is its ``ObjectState``.
///
/// Registered objects are held weakly in effect, without Swift `weak` references (a weak
/// reference gives its target a side table, which makes every retain and release of every
/// managed object take the slow path): the registry holds them strongly, and an unchanged object
/// that nobody else references (`isKnownUniquelyReferenced`) is dropped on lookup and by purges,
/// which run when the registry has doubled since the last one.
package struct ObjectGraph {
    /// Registered objects by ID. Objects with temporary IDs are found through `pending` instead;
    /// they join the registry when they get permanent IDs.
    package private(set) var registry = ObjectRegistry()
    private var purgeThreshold = 4096
    /// Objects with unsaved changes, held strongly.
    package private(set) var pending = PendingChanges()
    /// Objects changed since the last `processPendingChanges()`.
    package private(set) var unprocessed: [ManagedObject] = []
    /// Temporary IDs the context replaced by permanent ones at a save, kept only while it has
    /// children (which go on using the temporary IDs of objects they pushed).
    package var retiredTemporaryIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// Who is told about changes (fetched results controllers), held weakly.
    package var observers: [WeakGraphObserver] = []
    /// The context's `retainsRegisteredObjects`: registered objects are kept even when nobody
    /// else references them.
    package var retainsObjects = false
    /// The context's `propagatesDeletesAtEndOfEvent` (default `true`); when `false`, deletions
    /// wait in `deferredDeletions` for the next save to apply their delete rules.
    package var propagatesDeletesAtEndOfEvent = true
    package var deferredDeletions: [ManagedObject] = []
    /// Set while `save()` runs: deletions made then (by `willSave`, by cascades) are propagated
    /// whatever `propagatesDeletesAtEndOfEvent` says.
    package var isSaving = false
    /// The object sets of the last objects-did-change notification, for the next did-save.
    package var announced = AnnouncedChanges()
    /// Values slots had at `willChangeValue(forKey:)`, until the matching `didChangeValue(forKey:)`
    /// records the change (for undo), keyed by object and slot.
    package var changesInProgress: [ChangeInProgress: (old: ManagedValue, wasChanged: Bool)] = [:]

    /// An object's slot between `willChangeValue(forKey:)` and `didChangeValue(forKey:)`.
    package struct ChangeInProgress: Hashable {
        package var object: ObjectIdentifier
        package var slot: Int
    }

    package mutating func register(_ object: ManagedObject) {
        registry[object.objectID] = object
        if registry.count > purgeThreshold { purgeUnreferencedObjects() }
    }

    /// Registers `object`, whose ID `probe` looked for in the registry and did not find.
    package mutating func register(_ object: ManagedObject, at probe: IDTable<ObjectRegistry.Entry>.Probe) {
        registry.insert(object, at: probe)
        if registry.count > purgeThreshold { purgeUnreferencedObjects() }
    }

    /// Drops registered objects that have no changes and that nobody outside the context
    /// references: what a weak reference would have dropped.
    package mutating func purgeUnreferencedObjects() {
        guard !retainsObjects else { return }
        let doomed = registry.removeAll { object in isKnownUniquelyReferenced(&object) && object?.isPendingFlag == false }
        for object in doomed { object.managedObjectContext = nil }
        purgeThreshold = max(4096, registry.count * 2)
    }

    /// Drops those of `objects` (emptied) that have no changes and that nobody else references,
    /// as ``purgeUnreferencedObjects()`` does for the whole registry: for a batch of results left
    /// behind, at the cost of the batch, whatever the number of objects the context holds.
    package mutating func forgetUnreferenced(_ objects: inout [ManagedObject]) {
        guard !retainsObjects else { return objects.removeAll() }
        while !objects.isEmpty {
            // The list's reference goes first: the registry's must then be the only one.
            let id = objects.removeLast().objectID
            if let index = registry.index(for: id) { _ = dropIfUnreferenced(at: index) }
        }
    }

    /// The registered object for an ID, unless only the registry still references it.
    package mutating func liveRegisteredObject(for id: ManagedObjectID) -> ManagedObject? {
        guard let index = registry.index(for: id) else { return nil }
        return dropIfUnreferenced(at: index) ? nil : registry.object(at: index)
    }

    /// Removes the object at `index` when only the registry references it and it has no changes
    /// (what a weak reference would have dropped); whether it did.
    private mutating func dropIfUnreferenced(at index: Int) -> Bool {
        guard !retainsObjects, registry.isUniquelyReferenced(at: index), !registry.object(at: index).isPendingFlag else { return false }
        registry.remove(at: index).managedObjectContext = nil
        return true
    }

    // Look-ups are mutating only so that a context's calls reach the registry in place: a
    // non-mutating call on the context's `graph` works on a copy of the registry's table (a
    // retain and a release of its storage, two atomic operations, at every look-up).

    /// The object registered under `id`.
    package mutating func registered(_ id: ManagedObjectID) -> ManagedObject? { registry[id] }

    /// The object registered under `id`, and where the look-up ended (for ``register(_:at:)``
    /// when there is none).
    package mutating func probeRegistry(_ id: ManagedObjectID) -> (object: ManagedObject?, probe: IDTable<ObjectRegistry.Entry>.Probe) {
        let probe = registry.probe(id)
        return (probe.found.map { registry.object(at: $0) }, probe)
    }

    /// Registers `object` under `id` (its new permanent ID, or the stored row it became).
    package mutating func register(_ object: ManagedObject, as id: ManagedObjectID) {
        registry[id] = object
    }

    /// Drops whatever is registered under `id` (an ID its object no longer has).
    package mutating func unregister(id: ManagedObjectID) {
        registry[id] = nil
    }

    /// Makes room for `additional` more registered objects that the caller holds (a fetch's
    /// rows, objects given permanent IDs). Objects nobody references are purged once now, if the
    /// registrations would pass the purge threshold, instead of during them: each purge scans
    /// every registered object, and those of this batch, all held by the caller, would be scanned
    /// again at every doubling (a fetch of 100,000 rows into an empty context scanned 130,000
    /// objects, cold, for nothing: a tenth of its time).
    /// The threshold afterwards is the one a purge right after the registrations would set.
    package mutating func reserveRegistry(_ additional: Int) {
        if registry.count + additional > purgeThreshold {
            purgeUnreferencedObjects()
            purgeThreshold = max(purgeThreshold, (registry.count + additional) * 2)
        }
        registry.reserveCapacity(registry.count + additional)
    }

    /// The object with this temporary ID among the pending inserts.
    package mutating func insertedObject(for id: ManagedObjectID, in context: ManagedObjectContext) -> ManagedObject? {
        pending.insertedObject(for: id, in: context)
    }

    package mutating func unregister(_ object: ManagedObject) {
        removeFromRegistry(object)
        release(object)
    }

    /// Holds a changed (or deleted) object until it is saved: listed among the pending changes,
    /// marked pending.
    package mutating func holdChanged(_ object: ManagedObject) {
        pending.didChange(object)
        object.isPendingFlag = true
    }

    /// Holds an inserted object until it is saved: listed among the pending inserts, marked
    /// pending.
    package mutating func holdInserted(_ object: ManagedObject) {
        pending.didInsert(object)
        object.isPendingFlag = true
    }

    /// Stops holding an object for a save (it has nothing left to save).
    package mutating func release(_ object: ManagedObject) {
        pending.forget(object)
        object.isPendingFlag = false
    }

    /// Stops holding every object for a save (after a save, a rollback, a reset).
    package mutating func releaseAll() {
        pending.forEachHeld { $0.isPendingFlag = false }
        pending.removeAll()
    }

    /// Drops forgotten inserts from the pending inserts (after inserts were taken back).
    package mutating func compactInserted(in context: ManagedObjectContext) {
        pending.compactInserted(in: context)
    }

    /// Drops the object from the registry (when it is the one registered under its ID), with one
    /// probe.
    package mutating func removeFromRegistry(_ object: ManagedObject) {
        if let index = registry.index(for: object.objectID), registry.holds(object, at: index) { registry.remove(at: index) }
    }

    /// An object's values or state changed: it is held strongly until saved, and its change
    /// waits for the next `processPendingChanges()`.
    package mutating func objectDidChange(_ object: ManagedObject) {
        if !object.isPendingFlag {
            if object.isInsertedFlag { object.isPendingFlag = true } else { holdChanged(object) }
        }
        markUnprocessed(object)
    }

    /// Lists the object among the changes of this event (once).
    package mutating func markUnprocessed(_ object: ManagedObject) {
        if !object.isUnprocessedFlag {
            object.isUnprocessedFlag = true
            unprocessed.append(object)
        }
    }

    /// The changes of this event, taken for processing (the list is emptied).
    package mutating func takeUnprocessed() -> [ManagedObject] {
        let taken = unprocessed
        unprocessed.removeAll()
        for object in taken { object.isUnprocessedFlag = false }
        return taken
    }

    /// Forgets every object and change.
    package mutating func removeAll() {
        registry.removeAll()
        releaseAll()
        deferredDeletions = []
        announced.removeAll()
        _ = takeUnprocessed()
    }
}
