import Foundation

/// A scratch pad of managed objects bound to one queue. Mirrors `NSManagedObjectContext`.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// context.perform {
///     let note = Note(context: context)
///     note.text1 = "hello"
///     try? context.save()
/// }
/// ```
///
/// A `.privateQueue` context owns a serial queue; a `.mainQueue` context uses the main queue.
/// Its objects and its methods other than the `perform` family may only be used on that queue.
/// With concurrency debugging on (``ConcurrencyDebug``), using them elsewhere traps.
///
/// The context itself is `Sendable`: the `perform` family may be called from anywhere, and the
/// state it guards lives on its queue.
// @unchecked Sendable: configuration (`config`) is behind a lock; the object graph (`graph`,
// see ObjectGraph) is owned by the context's queue: every method that touches it runs on that
// queue (checked under concurrency debugging), as in Core Data. Objects point back through the
// context's `ContextHandle`.
public final class ManagedObjectContext: @unchecked Sendable, CustomStringConvertible {
    /// How a context is bound to a queue. Mirrors `NSManagedObjectContextConcurrencyType`.
    public enum ConcurrencyType: Sendable {
        /// The context uses the main queue: use it from the main queue / main actor.
        case mainQueue
        /// The context owns a private serial queue: use it inside `perform` / `performAndWait`.
        case privateQueue
    }

    /// The context's concurrency type.
    public let concurrencyType: ConcurrencyType
    /// What the context's objects point at (see `ContextHandle`).
    package let handle = ContextHandle()
    package let queue: ContextQueue

    struct Configuration {
        var coordinator: PersistentStoreCoordinator?
        var parent: ManagedObjectContext?
        var name: String?
        var transactionAuthor: String?
        var mergePolicy: MergePolicy = .error
        var automaticallyMerges = false
        var stalenessInterval: TimeInterval = -1
        var shouldDeleteInaccessibleFaults = true
        /// The contexts that have this one as their parent, weakly (then temporary IDs it
        /// retires are remembered, for children that still use them, until no child is left).
        var children: [WeakContext] = []
    }
    struct WeakContext {
        weak var context: ManagedObjectContext?
    }
    /// This context's saves, for `didSaveEvents`.
    package let saveEvents = EventBroadcaster<SaveEvent>()
    private let config = Locked(Configuration())

    // Queue-owned state.
    /// The registered objects, pending changes and retired IDs (see ``ObjectGraph``).
    #if DEBUG
    package var graph = ObjectGraph()
    #else
    @exclusivity(unchecked) package var graph = ObjectGraph()   // see ManagedObject.state
    #endif
    /// A relationship that could not be read from the store since the last save (its members
    /// read as empty): the next `save()` throws it rather than write changes made on that view.
    package var relationshipReadFailure: CoreDataError?
    /// The undo manager, queue-owned like the objects it records (assigned whole: its run-time
    /// exclusivity check, paid on every property write, is skipped).
    @exclusivity(unchecked) package var undoStorage: ContextUndoManager?
    /// The query generation the context is pinned to (`nil`: unpinned); queue-owned. See
    /// ManagedObjectContext+QueryGeneration.swift.
    package var pinnedGeneration: QueryGeneration?
    /// The app's own values, kept with the context (never read by the library); use it on the
    /// context's queue. Mirrors `userInfo`.
    public let userInfo = NSMutableDictionary()
    /// Tells the objects' Observation registrars of changes that arrive whole (merges, refreshes,
    /// rollbacks) while `makesObjectsObservable` is on.
    let observationForwarder = ObservationForwarder()

    /// Makes a context bound to the given kind of queue.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        self.queue = ContextQueue(main: concurrencyType == .mainQueue, label: "OpenCoreData.ManagedObjectContext")
        handle.context = self
        if concurrencyType == .mainQueue {
            handle.makesObjectsObservable = true
            addGraphObserver(observationForwarder)
        }
    }

    deinit {
        // Objects that outlive their context must not point at it.
        handle.context = nil
    }

    /// The coordinator the context fetches from and saves to. Setting it on a context that has a
    /// ``parent`` is a programmer error.
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { config.withLock { $0.coordinator ?? $0.parent?.persistentStoreCoordinator } }
        set {
            let merges = config.withLock {
                precondition($0.parent == nil || newValue == nil, """
                    Context '\($0.name ?? "unnamed")' already has a parent context; a context has either a \
                    parent or a persistent store coordinator, never both.
                    """)
                $0.coordinator = newValue
                return $0.automaticallyMerges
            }
            if merges { newValue?.startMerging(into: self) }
        }
    }

    /// The parent context, for child contexts. Setting it on a context that has a coordinator is
    /// a programmer error.
    public var parent: ManagedObjectContext? {
        get { config.withLock { $0.parent } }
        set {
            config.withLock {
                precondition($0.coordinator == nil || newValue == nil, """
                    Context '\($0.name ?? "unnamed")' already has a persistent store coordinator; a context \
                    has either a parent or a persistent store coordinator, never both.
                    """)
                $0.parent = newValue
            }
            newValue?.config.withLock { parent in
                parent.children.removeAll { $0.context == nil }
                parent.children.append(WeakContext(context: self))
            }
        }
    }

    /// Whether some context alive has this one as its parent.
    package var hasChildren: Bool {
        config.withLock { config in
            config.children.removeAll { $0.context == nil }
            return !config.children.isEmpty
        }
    }

    /// A name for debugging and for persistent history (`contextName`).
    public var name: String? {
        get { config.withLock { $0.name } }
        set { config.withLock { $0.name = newValue } }
    }

    /// The author recorded in persistent history for this context's saves.
    public var transactionAuthor: String? {
        get { config.withLock { $0.transactionAuthor } }
        set { config.withLock { $0.transactionAuthor = newValue } }
    }

    /// How saves resolve conflicts with changes made elsewhere (default `.error`).
    public var mergePolicy: MergePolicy {
        get { config.withLock { $0.mergePolicy } }
        set { config.withLock { $0.mergePolicy = newValue } }
    }

    /// Whether changes saved to this context's parent are merged into it automatically,
    /// asynchronously on its queue, in save order: for a context on a coordinator, the saves of
    /// the coordinator's other contexts; for a child context, its parent's saves (a sibling's
    /// push into the parent is not one, see DEVIATIONS.md). Mirrors
    /// `automaticallyMergesChangesFromParent`.
    public var automaticallyMergesChangesFromParent: Bool {
        get { config.withLock { $0.automaticallyMerges } }
        set {
            // A child hears from its parent (`announceSave`), never from the coordinator directly:
            // its view of the store goes through the parent, which may not have merged the save.
            let coordinator = config.withLock { config -> PersistentStoreCoordinator? in
                config.automaticallyMerges = newValue
                return config.coordinator
            }
            if newValue { coordinator?.startMerging(into: self) } else { coordinator?.stopMerging(into: self) }
        }
    }

    /// The children that merge this context's saves automatically.
    package var mergingChildren: [ManagedObjectContext] {
        // Each child's flag is read after this context's lock is released (a child takes its own
        // lock, then its parent's, when asked for its coordinator).
        let children = config.withLock { config in
            config.children.removeAll { $0.context == nil }
            return config.children.compactMap(\.context)
        }
        return children.filter { $0.config.withLock { $0.automaticallyMerges } }
    }

    /// How old (in seconds) a cached row may be when a fault loads it; negative (the default)
    /// means any age, 0 means always from the store. Mirrors `stalenessInterval`.
    public var stalenessInterval: TimeInterval {
        get { config.withLock { $0.stalenessInterval } }
        set { config.withLock { $0.stalenessInterval = newValue } }
    }

    /// What happens when a fault cannot be fulfilled because its row is gone from the store
    /// (another context or process deleted it) or the store could not read it. `true` (the
    /// default, as in Core Data): the object reads as deleted, with every attribute `nil`/zero
    /// and no relationships, and the next ``save()`` or ``reset()`` discards it without touching
    /// the store. `false`: using such a fault is a programmer error and traps, as Core Data
    /// raises `NSObjectInaccessibleException`. Mirrors `shouldDeleteInaccessibleFaults`.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { config.withLock { $0.shouldDeleteInaccessibleFaults } }
        set { config.withLock { $0.shouldDeleteInaccessibleFaults = newValue } }
    }

    /// Whether the context keeps every registered object alive (`true`), or only those with
    /// unsaved changes and those referenced elsewhere (`false`, the default). Set it on the
    /// context's queue, or before the context is used. Mirrors `retainsRegisteredObjects`.
    public var retainsRegisteredObjects: Bool {
        get { graph.retainsObjects }
        set {
            checkQueue("retainsRegisteredObjects")
            graph.retainsObjects = newValue
        }
    }

    /// Whether the delete rules of deleted objects (cascade, nullify) are applied at the end of
    /// each event, in ``processPendingChanges()`` (`true`, the default), or only when the context
    /// saves (`false`). Set it on the context's queue, or before the context is used. Mirrors
    /// `propagatesDeletesAtEndOfEvent`.
    public var propagatesDeletesAtEndOfEvent: Bool {
        get { graph.propagatesDeletesAtEndOfEvent }
        set {
            checkQueue("propagatesDeletesAtEndOfEvent")
            graph.propagatesDeletesAtEndOfEvent = newValue
        }
    }

    /// Records changes for undo and redo; `nil` (the default) records nothing. Set and use it on
    /// the context's queue. Mirrors `undoManager`.
    public var undoManager: ContextUndoManager? {
        get { undoStorage }
        set {
            checkQueue("undoManager")
            undoStorage = newValue
            newValue?.context = self
        }
    }

    /// Undoes the last group of changes (see ``ContextUndoManager``). Mirrors `undo()`.
    public func undo() { undoStorage?.undo() }
    /// Redoes the last undone group. Mirrors `redo()`.
    public func redo() { undoStorage?.redo() }

    package var debugName: String {
        name ?? "\(concurrencyType == .mainQueue ? "main-queue" : "private-queue") context \(ObjectIdentifier(self).hashValue)"
    }

    public var description: String { "<ManagedObjectContext \(debugName)>" }

    /// The coordinator or a clear error when there is none.
    package func requireCoordinator() throws(CoreDataError) -> PersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, """
                The context '\(debugName)' has no persistent store coordinator. Set persistentStoreCoordinator \
                (or parent) before fetching or saving.
                """)
        }
        return coordinator
    }

    /// The entity for a `@Managed` class in the context's model.
    package func entity(forClass type: ManagedObject.Type) -> EntityDescription? {
        persistentStoreCoordinator?.managedObjectModel.entity(for: type)
    }

    /// Checks the queue under concurrency debugging.
    package func checkQueue(_ operation: @autoclosure () -> String) {
        if ConcurrencyDebug.isEnabled { ConcurrencyDebug.checkAccess(to: self, operation()) }
    }

    // MARK: - Registration (queue-owned)

    /// The object with a temporary ID (inserted objects are not in the registry until they get
    /// permanent IDs).
    package func insertedObject(for id: ManagedObjectID) -> ManagedObject? {
        guard id.isTemporaryID else { return nil }
        return graph.insertedObject(for: id, in: self)
    }

    /// The objects registered in the context (objects with changes, and the unchanged ones that
    /// are still referenced somewhere).
    public var registeredObjects: Set<ManagedObject> {
        checkQueue("registeredObjects")
        graph.purgeUnreferencedObjects()
        return Set(graph.pending.liveInserted(in: self)).union(graph.pending.changed).union(graph.registry.objects)
    }

    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> {
        checkQueue("insertedObjects")
        return Set(graph.pending.liveInserted(in: self))
    }

    /// Registered objects with unsaved changes to their values.
    public var updatedObjects: Set<ManagedObject> {
        checkQueue("updatedObjects")
        return Set(graph.pending.changed.filter { $0.isUpdated })
    }

    /// Objects that will be deleted at the next save.
    public var deletedObjects: Set<ManagedObject> {
        checkQueue("deletedObjects")
        return Set(graph.pending.changed.filter { $0.isDeleted })
    }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool {
        checkQueue("hasChanges")
        return graph.pending.hasLiveChanges(in: self)
    }
}
