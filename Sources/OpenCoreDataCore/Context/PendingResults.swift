import Foundation

/// What a context's unsaved changes do to a request's results — one rule for the context's own
/// fetches (which see objects) and for its children's (which see the rows it hands them):
/// results read beneath the context (from the store, or from its parent) leave when deleted here
/// or changed here so that they no longer match; inserted and changed objects of the fetched
/// entity (or its sub-entities, when included) that match join. Used on the context's queue.
struct PendingResults {
    let context: ManagedObjectContext
    let request: StoreFetchRequest

    /// Whether the object is of the fetched entity (or one of its sub-entities, when included).
    func isOfFetchedEntity(_ object: ManagedObject) -> Bool {
        if object.entity === request.entity { return true }
        return request.includesSubentities && object.entity.isKindOf(entity: request.entity)
    }

    /// Whether the object is (or, unsaved, will be saved) in one of the request's stores.
    func isInRequestedStores(_ object: ManagedObject) -> Bool {
        guard let identifiers = request.storeIdentifiers else { return true }
        guard let store = object.objectID.storeIdentifier ?? (try? context.persistentStoreCoordinator?.store(for: object.entity))??.identifier else {
            return false
        }
        return identifiers.contains(store)
    }

    func matches(_ object: ManagedObject) -> Bool {
        request.predicate.map { context.evaluate($0, on: object, as: request.entity) } ?? true
    }

    /// Whether a result read beneath the context stays in the results, given what the context did
    /// to its object.
    func keeps(_ object: ManagedObject) -> Bool {
        !object.isDeletedFlag && (!object.hasDirtySlots || matches(object))
    }

    /// The context's inserted and changed objects that belong in the results and are not among
    /// those already read (`isRead`), in insertion order then the changed ones.
    func joining(besides isRead: (ManagedObject) -> Bool) -> [ManagedObject] {
        var joined: [ManagedObject] = []
        for object in context.graph.pending.liveInserted(in: context) + context.graph.pending.liveChanged(in: context)
        where !object.isDeletedFlag && (object.isInsertedFlag || object.hasDirtySlots) && isOfFetchedEntity(object) && !isRead(object)
            && isInRequestedStores(object) && matches(object) {
            joined.append(object)
        }
        return joined
    }
}
