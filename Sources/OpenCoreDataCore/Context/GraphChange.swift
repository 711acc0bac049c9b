import Foundation

/// What may have changed in a context's object graph, told to the observers that keep results
/// current (fetched results controllers, result streams). Delivered on the context's queue right
/// after the change, once per event: `processPendingChanges()` (the context's own edits, undo and
/// redo), a merge (another context's save, history, remote changes), a save, `refresh`,
/// `rollback` and `reset`. An observer re-examines what is named; anything not named did not
/// change in a way it can see.
package struct GraphChange {
    /// Objects whose values, state or membership in the context may have changed (inserted,
    /// changed, deleted, refreshed, forgotten, given permanent IDs).
    package var objects: [ManagedObject] = []
    /// Objects whose values did not change but whose ID or registration did (a save, permanent
    /// IDs): their place is checked again, without reporting them as updated.
    package var rechecked: [ManagedObject] = []
    /// Objects changed or inserted elsewhere, by ID: those not registered here are not among
    /// `objects`, yet may now match a request.
    package var objectIDs: [ManagedObjectID] = []
    /// Every object may have changed (`reset()`): results must be fetched anew.
    package var everything = false
    /// The change is the context's own edits, told at `processPendingChanges()` (observers that
    /// were told of each edit as it was made may skip it).
    package var isOwnEdits = false

    package var isEmpty: Bool { objects.isEmpty && rechecked.isEmpty && objectIDs.isEmpty && !everything }
}

/// Receives a context's ``GraphChange``s on the context's queue.
package protocol GraphObserver: AnyObject {
    func graphDidChange(_ change: GraphChange, in context: ManagedObjectContext)
}

/// An observer held weakly: a controller that nobody holds stops observing.
package struct WeakGraphObserver {
    package weak var observer: (any GraphObserver)?
}

extension ManagedObjectContext {
    /// Starts telling `observer` about this context's changes (on the context's queue).
    package func addGraphObserver(_ observer: any GraphObserver) {
        graph.observers.removeAll { $0.observer == nil || $0.observer === observer }
        graph.observers.append(WeakGraphObserver(observer: observer))
    }

    /// Stops telling `observer` about this context's changes.
    package func removeGraphObserver(_ observer: any GraphObserver) {
        graph.observers.removeAll { $0.observer == nil || $0.observer === observer }
    }

    /// Whether anyone observes the graph: changes are only described when someone listens.
    package var hasGraphObservers: Bool { !graph.observers.isEmpty }

    /// Tells the observers (on the context's queue). They may fetch, fault objects in and call
    /// back into the context; the list is copied first, so they may also stop observing.
    package func tellGraphObservers(_ change: GraphChange) {
        guard !graph.observers.isEmpty, !change.isEmpty else { return }
        let observers = graph.observers.compactMap(\.observer)
        if observers.count != graph.observers.count { graph.observers.removeAll { $0.observer == nil } }
        for observer in observers { observer.graphDidChange(change, in: self) }
    }
}
