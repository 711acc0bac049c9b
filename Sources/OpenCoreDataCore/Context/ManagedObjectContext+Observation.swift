import Foundation

extension ManagedObjectContext {
    /// Whether the properties of this context's objects can be observed with the Observation
    /// framework: `withObservationTracking` around a read of a `@Managed` attribute or
    /// relationship fires when it changes — by an edit, undo or redo, a merge from another context
    /// or from history, a refresh or a rollback. (`reset()` does not fire: the objects are gone,
    /// and reading them again is an error; results controllers and result streams fetch anew.)
    ///
    /// On by default for main-queue contexts (the ones views read), off for private-queue ones:
    /// with it on, each object read gets a registrar and each read is recorded, which costs about
    /// as much as the read itself — too much for imports and exports. Set it on the context's queue
    /// before reading the objects to observe.
    public var makesObjectsObservable: Bool {
        get { handle.makesObjectsObservable }
        set {
            checkQueue("makesObjectsObservable")
            guard newValue != handle.makesObjectsObservable else { return }
            handle.makesObjectsObservable = newValue
            if newValue { addGraphObserver(observationForwarder) } else { removeGraphObserver(observationForwarder) }
        }
    }
}
