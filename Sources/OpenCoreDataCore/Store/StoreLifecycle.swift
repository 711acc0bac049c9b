/// Where a store engine is in its life, and whether it takes writes: one value that each SQL
/// store keeps behind one lock (`Locked<StoreLifecycle<Loaded>>`), held only to read or replace
/// it, never across I/O. `Loaded` is what the store knows once a model is loaded (its layout,
/// metadata, the schema it checks writes against).
///
/// ```
/// opened ──load──▶ loaded ──close──▶ closed
///    └──────────────close──────────────▲
/// ```
/// A store is `opened` when made (its file or schema reached), `loaded` once `load(model:)`
/// succeeded (loading again replaces what it knew), and `closed` for good once removed from its
/// coordinator: every later use throws 134070 saying so, and a load is refused.
package struct StoreLifecycle<Loaded: Sendable>: Sendable {
    package enum Phase: Sendable {
        case opened
        case loaded(Loaded)
        case closed
    }

    package private(set) var phase = Phase.opened
    /// Opened read-only, or forced read-only by `load` (a store that records history opened
    /// without `NSPersistentHistoryTrackingKey`, as Core Data does).
    package private(set) var isReadOnly: Bool

    package init(readOnly: Bool) {
        isReadOnly = readOnly
    }

    /// What the loaded store knows, or `nil` before a load and after a close.
    package var loaded: Loaded? {
        if case .loaded(let loaded) = phase { return loaded }
        return nil
    }

    /// What the loaded store knows; throws 134070 naming `store` (e.g. "The SQLite store at …")
    /// before a load and after a close. `store` is made only for the error: a store's description
    /// formats its URL, 7,000 instructions that every fetch and save paid.
    package func requireLoaded(_ store: @autoclosure () -> String) throws(CoreDataError) -> Loaded {
        switch phase {
        case .loaded(let loaded): return loaded
        case .opened: throw CoreDataError(.persistentStoreOperation, "\(store()) is not loaded.")
        case .closed: throw Self.closedError(store())
        }
    }

    /// `load(model:)` succeeded: the store now works with `loaded`, read-only from now on when
    /// `forceReadOnly`. Refused once closed (134070 naming `store`).
    package mutating func load(_ loaded: Loaded, forceReadOnly: Bool = false, store: String) throws(CoreDataError) {
        if case .closed = phase { throw Self.closedError(store) }
        phase = .loaded(loaded)
        if forceReadOnly { isReadOnly = true }
    }

    /// Changes what the loaded store knows (new metadata, a schema checked since); nothing before
    /// a load or after a close.
    package mutating func update(_ change: (inout Loaded) -> Void) {
        guard case .loaded(var loaded) = phase else { return }
        phase = .opened     // (lets `loaded` be the only reference while it changes)
        change(&loaded)
        phase = .loaded(loaded)
    }

    /// Closed for good (removed from its coordinator).
    package mutating func close() {
        phase = .closed
    }

    private static func closedError(_ store: String) -> CoreDataError {
        CoreDataError(.persistentStoreOperation, "\(store) was closed (removed from its coordinator); add it to a coordinator again.")
    }
}
