import Foundation

/// Connects contexts to stores: routes fetches and saves, allocates permanent IDs, and keeps the
/// row cache of committed snapshots. Thread-safe; one coordinator serves every context of a
/// container. Mirrors `NSPersistentStoreCoordinator`.
///
/// Add stores with `addPersistentStore(type:configuration:at:options:)` (from the `OpenCoreData`
/// module) or through a `PersistentContainer`.
// @unchecked Sendable: `stores` is behind a lock; the model is frozen before any store is added
// and read-only afterwards; the row cache and the stores synchronise themselves.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    /// The model every store of this coordinator follows.
    public let managedObjectModel: ManagedObjectModel
    private let stores = Locked<[PersistentStore]>([])
    package let rowCache = RowCache()
    /// Saves commit and are handed to merging contexts one at a time, in commit order.
    // A plain lock, not `Locked<Void>`: a zero-sized guarded value gives the thread sanitizer
    // an access at the object's own address, reported as a race although the lock is held.
    private let saveOrder = NSLock()
    private struct WeakContext {
        // Weak on purpose: only contexts that merge automatically get a side table.
        weak var context: ManagedObjectContext?
    }
    private let mergingContexts = Locked<[WeakContext]>([])
    private let didSaveEventsBroadcaster = EventBroadcaster<SaveEvent>()

    /// Makes a coordinator for a model. Mirrors `init(managedObjectModel:)`.
    public init(managedObjectModel model: ManagedObjectModel) {
        self.managedObjectModel = model
        ModelsInUse.add(model)
    }

    /// The stores added so far.
    public var persistentStores: [PersistentStore] { stores.withLock { $0 } }

    /// The store with the given UUID.
    public func persistentStore(withIdentifier identifier: String) -> PersistentStore? {
        persistentStores.first { $0.identifier == identifier }
    }

    /// Opens a store engine for this coordinator's model and adds it. Used by the store types.
    package func add(_ store: PersistentStore) throws {
        try managedObjectModel.freeze()
        try store.engine.load(model: managedObjectModel)
        try stores.withLock { stores in
            if let url = store.url, stores.contains(where: { $0.url?.standardizedFileURL == url.standardizedFileURL }) {
                throw CoreDataError(.persistentStoreOpen, "The store at \(url.path) is already added to this coordinator.")
            }
            stores.append(store)
        }
        if PersistentStore.isOn(NSPersistentStoreRemoteChangeNotificationPostOptionKey, in: store.options) {
            // Called on the store's watcher thread: posted there, off the main queue.
            store.engine.watchChanges { [weak self, weak store] in
                guard let self, let store else { return }
                self.postRemoteChange(for: store)
            }
        }
    }

    /// Posts `.NSPersistentStoreRemoteChange` for a store: its URL, UUID and current history token.
    private func postRemoteChange(for store: PersistentStore) {
        var info: [String: Any] = [NSStoreUUIDKey: store.identifier]
        if let url = store.url { info[NSPersistentStoreURLKey] = url }
        if let number = try? store.engine.lastHistoryNumber() {
            info[NSPersistentHistoryTokenKey] = PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: number)
        }
        NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: self, userInfo: info)
    }

    /// The token of the latest history transaction of the given stores (all when `nil`), or `nil`
    /// when none records history. Mirrors `currentPersistentHistoryToken(fromStores:)`.
    public func currentPersistentHistoryToken(fromStores stores: [PersistentStore]? = nil) -> PersistentHistoryToken? {
        for store in stores ?? persistentStores {
            if let number = try? store.engine.lastHistoryNumber() {
                return PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: number)
            }
        }
        return nil
    }

    /// Removes a store and closes it. Mirrors `remove(_:)`.
    public func remove(_ store: PersistentStore) throws {
        let removed = stores.withLock { stores -> Bool in
            guard let index = stores.firstIndex(where: { $0 === store }) else { return false }
            stores.remove(at: index)
            return true
        }
        guard removed else {
            throw CoreDataError(.persistentStoreOperation, "The store \(store.identifier) is not part of this coordinator.")
        }
        store.engine.close()
    }

    /// The object ID a URI from ``ManagedObjectID/uriRepresentation()`` stands for, when it
    /// names one of this coordinator's stores and entities.
    public func managedObjectID(forURIRepresentation url: URL) -> ManagedObjectID? {
        guard url.scheme == "x-coredata" else { return nil }
        let host = url.host ?? ""
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let entity = managedObjectModel.entitiesByName[parts[0]] else { return nil }
        let key = parts[1]
        if key.hasPrefix("p"), let pk = Int64(key.dropFirst()), pk > 0, persistentStore(withIdentifier: host) != nil {
            return .permanent(entity, store: host, primaryKey: pk)
        }
        let temporaryPrefix = "t" + ManagedObjectID.temporaryPrefix
        if key.hasPrefix(temporaryPrefix), host.isEmpty, let number = UInt64(key.dropFirst(temporaryPrefix.count)) {
            return ManagedObjectID(entity: entity, storeIdentifier: nil, key: .temporary(number))
        }
        return nil
    }

    // MARK: - Store access for contexts

    package func store(for entity: EntityDescription) throws(CoreDataError) -> PersistentStore {
        guard let store = persistentStores.first else {
            throw CoreDataError(.persistentStoreOperation, "The persistent store coordinator has no store. Call loadPersistentStores() on the container (or add a store) before fetching or saving.")
        }
        return store
    }

    private func store(for id: ManagedObjectID) throws(CoreDataError) -> PersistentStore {
        if let identifier = id.storeIdentifier, let store = persistentStore(withIdentifier: identifier) { return store }
        return try store(for: id.entity)
    }

    package func fetch(_ request: StoreFetchRequest) throws -> (PersistentStore, [StoreRow]) {
        let store = try store(for: request.entity)
        return (store, try store.engine.fetch(request))
    }

    package func fetchKeys(_ request: StoreFetchRequest) throws -> (PersistentStore, [Int64]) {
        let store = try store(for: request.entity)
        return (store, try store.engine.fetchKeys(request))
    }

    package func count(_ request: StoreFetchRequest) throws -> Int {
        try store(for: request.entity).engine.count(request)
    }

    /// The committed row of an object: from the row cache when no older than `maximumAge`
    /// (any age when nil), else from its store (then cached).
    /// A read in a query generation neither uses nor fills the cache: its rows may be older than
    /// the cached ones, and other contexts must not see them.
    package func row(for id: ManagedObjectID, maximumAge: TimeInterval? = nil) throws(CoreDataError) -> RowSnapshot? {
        guard let pk = id.primaryKey else { return nil }
        let pinned = QueryGeneration.current != nil
        if maximumAge != 0, !pinned, let cached = rowCache.snapshot(for: id, maximumAge: maximumAge) { return cached }
        let store = try store(for: id)
        let row: StoreRow?
        do { row = try store.engine.row(entity: id.entity, primaryKey: pk) } catch { throw Self.wrap(error) }
        // A row of an entity that is not the ID's (or one of its sub-entities) is not this object
        // (an ID made from a damaged column, a URI naming the wrong entity): its values do not
        // fill the object's slots.
        guard let row, row.entity.isKindOf(entity: id.entity) else { return nil }
        if !pinned { rowCache.store([(id, row.snapshot)]) }
        return row.snapshot
    }

    /// The destinations of a to-many relationship of a saved object, as stored.
    package func related(_ relationship: RelationshipDescription, of id: ManagedObjectID) throws(CoreDataError) -> [ManagedObjectID] {
        guard let pk = id.primaryKey else { return [] }
        do { return try store(for: id).engine.fetchRelated(relationship, of: [pk]).map(\.member) } catch { throw Self.wrap(error) }
    }

    /// The destinations of a to-many relationship of many saved objects of one store, in one query.
    package func related(_ relationship: RelationshipDescription, of keys: [Int64], entity: EntityDescription) throws(CoreDataError) -> [(source: Int64, member: ManagedObjectID)] {
        guard !keys.isEmpty else { return [] }
        do { return try store(for: entity).engine.fetchRelated(relationship, of: keys) } catch { throw Self.wrap(error) }
    }

    /// Permanent IDs for new objects (one per entry, keys allocated per root entity).
    package func obtainPermanentIDs(for entities: [EntityDescription]) throws(CoreDataError) -> [ManagedObjectID] {
        guard let first = entities.first else { return [] }
        let store = try store(for: first)
        var result: [ManagedObjectID] = []
        result.reserveCapacity(entities.count)
        // One block of keys per root entity, handed out in the order of `entities`. A model has
        // few roots, so a linear search beats hashing every object.
        var roots: [(root: EntityDescription, count: Int, next: Int64)] = []
        for entity in entities {
            let root = entity.rootEntity
            if let index = roots.firstIndex(where: { $0.root === root }) { roots[index].count += 1 } else { roots.append((root, 1, 0)) }
        }
        for index in roots.indices {
            do { roots[index].next = try store.engine.allocatePrimaryKeys(root: roots[index].root, count: roots[index].count) } catch { throw Self.wrap(error) }
        }
        let identifier = store.identifier
        for entity in entities {
            let root = entity.rootEntity
            let index = roots.count == 1 ? 0 : roots.firstIndex { $0.root === root } ?? 0
            result.append(.permanent(entity, store: identifier, primaryKey: roots[index].next))
            roots[index].next += 1
        }
        return result
    }

    /// Writes a save in one transaction, updates the row cache and hands the save to the
    /// contexts that merge automatically (in commit order: both happen under `saveOrder`).
    /// Returns the conflicts (and writes nothing) when rows changed underneath.
    package func save(_ request: StoreSaveRequest, store: PersistentStore, event makeEvent: () -> SaveEvent) throws -> [StoreConflict] {
        try saveOrder.withLock {
            let conflicts = try store.engine.save(request)
            guard conflicts.isEmpty else { return conflicts }
            updateRowCache(after: request, store: store)
            let receivers = mergingContexts.withLock { contexts in
                contexts.removeAll { $0.context == nil }
                return contexts.compactMap(\.context)
            }
            if !receivers.isEmpty || didSaveEventsBroadcaster.hasSubscribers {
                let event = makeEvent()
                for context in receivers where ObjectIdentifier(context) != event.source {
                    context.queue.async { context.merge(event) }
                }
                didSaveEventsBroadcaster.send(event)
            }
            return []
        }
    }

    private func updateRowCache(after request: StoreSaveRequest, store: PersistentStore) {
        var cached: [(ManagedObjectID, RowSnapshot)] = []
        // Rows with derived attributes are changed by the store's triggers after the save wrote
        // them (a count follows its relationship's rows): they are read again, not cached.
        if managedObjectModel.entities.contains(where: \.hasDerivedAttributes) {
            rowCache.removeAll { $0.entity.hasDerivedAttributes }
        }
        for update in request.updates where !update.entity.hasDerivedAttributes {
            cached.append((.permanent(update.entity, store: store.identifier, primaryKey: update.primaryKey),
                           RowSnapshot(values: update.values, version: update.expectedVersion + 1)))
        }
        // Inserted rows are not cached: the saving context holds them, and caching a large import
        // would only evict rows other contexts use.
        rowCache.remove(request.deletes.map { .permanent($0.entity, store: store.identifier, primaryKey: $0.primaryKey) })
        rowCache.store(cached)
    }

    /// Runs a batch operation on the entity's store, in commit order with saves, and drops the
    /// affected rows from the row cache (all of the entity's rows when the keys are unknown).
    package func batch(_ entity: EntityDescription, _ operation: (any StoreEngine) throws -> BatchOutcome) throws -> (PersistentStore, BatchOutcome) {
        let store = try store(for: entity)
        let outcome = try saveOrder.withLock { try operation(store.engine) }
        if let keys = outcome.keys {
            rowCache.remove(keys.map { .permanent(entity, store: store.identifier, primaryKey: $0) })
        } else {
            rowCache.removeAll { $0.entity.rootEntity === entity.rootEntity }
        }
        return (store, outcome)
    }

    /// Every save through this coordinator, for Swift concurrency.
    public var didSaveEvents: AsyncStream<SaveEvent> { didSaveEventsBroadcaster.stream() }

    package func startMerging(into context: ManagedObjectContext) {
        mergingContexts.withLock { contexts in
            if !contexts.contains(where: { $0.context === context }) { contexts.append(WeakContext(context: context)) }
        }
    }

    package func stopMerging(into context: ManagedObjectContext) {
        mergingContexts.withLock { $0.removeAll { $0.context === context || $0.context == nil } }
    }

    package static func wrap(_ error: any Error) -> CoreDataError {
        if let error = error as? CoreDataError { return error }
        return CoreDataError(.persistentStoreOperation, "The store reported an error: \(error)")
    }
}
