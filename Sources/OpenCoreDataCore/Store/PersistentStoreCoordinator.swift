import Foundation

/// Connects contexts to stores: routes fetches and saves, allocates permanent IDs, and keeps the
/// row cache of committed snapshots. Thread-safe; one coordinator serves every context of a
/// container. Mirrors `NSPersistentStoreCoordinator`.
///
/// Add stores with `addPersistentStore(type:configuration:at:options:)` (from the `OpenCoreData`
/// module) or through a `PersistentContainer`.
// @unchecked Sendable: `routing` is behind a lock; the model is frozen before any store is added
// and read-only afterwards; the row cache and the stores synchronise themselves.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    /// The model every store of this coordinator follows.
    public let managedObjectModel: ManagedObjectModel
    /// The stores and which entities each holds. Guarded by its lock.
    let routing = Locked<Routing>(Routing())
    package let rowCache = RowCache()
    /// Saves commit and are handed to merging contexts one at a time, in commit order.
    // A plain lock, not `Locked<Void>`: a zero-sized guarded value gives the thread sanitizer
    // an access at the object's own address, reported as a race although the lock is held.
    private let saveOrder = NSLock()
    /// What stores committed of saves across several stores that failed as a whole, for their
    /// context's retry. Owned by `saveOrder`.
    private var partialCommits = PartialCommits()
    private struct WeakContext {
        // Weak on purpose: only contexts that merge automatically get a side table.
        weak var context: ManagedObjectContext?
    }
    private let mergingContexts = Locked<[WeakContext]>([])
    private let didSaveEventsBroadcaster = EventBroadcaster<SaveEvent>()
    /// Runs the blocks given to `perform` in order, one at a time (`performAndWait` blocks
    /// take `performLock` too; see PersistentStoreCoordinator+Perform.swift).
    let performQueue = DispatchQueue(label: "OpenCoreData.PersistentStoreCoordinator.perform")
    /// Held while a `perform` or `performAndWait` block runs; recursive, so that a block may call
    /// `performAndWait` again.
    let performLock = NSRecursiveLock()

    /// Makes a coordinator for a model. Mirrors `init(managedObjectModel:)`.
    public init(managedObjectModel model: ManagedObjectModel) {
        self.managedObjectModel = model
        ModelsInUse.add(model)
    }

    /// The stores added so far.
    public var persistentStores: [PersistentStore] { routing.withLock { $0.stores } }

    /// The store with the given UUID.
    public func persistentStore(withIdentifier identifier: String) -> PersistentStore? {
        persistentStores.first { $0.identifier == identifier }
    }

    /// Opens a store engine for this coordinator's model and adds it (used by the store types);
    /// with `replaced`, in that store's place in one step (its engine then closed), so that a
    /// copy may keep its UUID.
    package func add(_ store: PersistentStore, replacing replaced: PersistentStore? = nil) throws {
        try managedObjectModel.freeze()
        try store.engine.load(model: managedObjectModel)
        let entityNames = try entityNames(ofConfiguration: store.configurationName)
        try routing.withLock { routing in
            var stores = routing.stores
            if let replaced {
                guard let index = stores.firstIndex(where: { $0 === replaced }) else {
                    throw CoreDataError(.persistentStoreOperation, "The store \(replaced.identifier) is not part of this coordinator.")
                }
                stores.remove(at: index)
            }
            // `/dev/null` names a new in-memory database each time it is added, not one file.
            if let url = store.url, url.standardizedFileURL.path != "/dev/null",
               stores.contains(where: { $0.url?.standardizedFileURL == url.standardizedFileURL }) {
                throw CoreDataError(.persistentStoreOpen, "The store at \(url.path) is already added to this coordinator.")
            }
            if stores.contains(where: { $0.identifier == store.identifier }) {
                throw CoreDataError(.persistentStoreOpen, """
                    A store with the UUID \(store.identifier) is already added to this coordinator \
                    (\(store.url?.path ?? "in memory") is a copy of it?). Object IDs name their store by UUID, \
                    so two stores cannot share one; give the copy a new UUID with setMetadata or add only one.
                    """)
            }
            routing.stores = stores + [store]
            if let replaced { routing.entityNames[replaced.identifier] = nil }
            if let entityNames { routing.entityNames[store.identifier] = entityNames }
        }
        replaced?.engine.close()
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

    /// A token at the latest history transaction of each of the given stores (all when `nil`)
    /// that records history, or `nil` when none does. Mirrors
    /// `currentPersistentHistoryToken(fromStores:)`.
    public func currentPersistentHistoryToken(fromStores stores: [PersistentStore]? = nil) -> PersistentHistoryToken? {
        var positions: [(store: String, number: Int64)] = []
        for store in stores ?? persistentStores {
            if let number = try? store.engine.lastHistoryNumber() { positions.append((store.identifier, number)) }
        }
        return PersistentHistoryToken(positions: positions)
    }

    /// The metadata of an added store: its own keys (`NSStoreType`, `NSStoreUUID`,
    /// `NSStoreModelVersionHashes`, …) and the app's. Mirrors `metadata(for:)`.
    public func metadata(for store: PersistentStore) -> [String: Any] {
        store.metadata
    }

    /// Replaces the app's keys of an added store's metadata (property-list values; the store's
    /// own keys stay, and its UUID cannot change). Mirrors `setMetadata(_:for:)`, but writes at
    /// once, in a transaction of its own, where Core Data waits for the next save (and forgets
    /// the metadata when none comes); so it throws: for values that are not property lists, a
    /// store that is not this coordinator's, or one that cannot be written.
    public func setMetadata(_ metadata: [String: Any]?, for store: PersistentStore) throws {
        guard persistentStore(withIdentifier: store.identifier) === store else {
            throw CoreDataError(.persistentStoreOperation, "setMetadata(_:for:) names a store that is not added to this coordinator.")
        }
        do { try store.engine.setMetadata(metadata ?? [:]) } catch { throw Self.wrap(error) }
    }

    /// Removes a store and closes it. Mirrors `remove(_:)`.
    public func remove(_ store: PersistentStore) throws {
        let removed = routing.withLock { routing -> Bool in
            guard let index = routing.stores.firstIndex(where: { $0 === store }) else { return false }
            routing.stores.remove(at: index)
            routing.entityNames[store.identifier] = nil
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
            return ManagedObjectID(entity: entity, storeNumber: 0, key: .temporary(number))
        }
        return nil
    }

    // MARK: - Store access for contexts

    /// The store an object lives in: the one its ID names (an error when that store was removed:
    /// another store's row under the same key is not this object).
    package func store(for id: ManagedObjectID) throws(CoreDataError) -> PersistentStore {
        guard id.storeNumber != 0 else { return try store(for: id.entity) }
        if let store = persistentStores.first(where: { $0.number == id.storeNumber }) { return store }
        if persistentStores.isEmpty { return try store(for: id.entity) }   // the usual "no store" error
        throw CoreDataError(.persistentStoreOperation, """
            The object \(id.uriRepresentation().absoluteString) belongs to the store \
            \(id.storeIdentifier ?? ""), which is not (or no longer) added to this coordinator. Add that store \
            again to reach it.
            """)
    }

    /// The rows a request selects, from every store that holds its entity (in the request's
    /// order and window across them). Rows from a store other than the one returned say which.
    package func fetch(_ request: StoreFetchRequest) throws -> (PersistentStore, [StoreRow]) {
        let stores = try self.stores(for: request)
        guard let first = stores.first else { return (try store(for: request.entity), []) }
        if stores.count == 1 { return (first, try first.engine.fetch(request)) }
        return (stores[0], try fetch(request, across: stores))
    }

    /// The rows a request selects in one store.
    package func fetch(_ request: StoreFetchRequest, from store: PersistentStore) throws -> [StoreRow] {
        try store.engine.fetch(request)
    }

    /// The keys of the rows a request selects, when one store holds its entity (keys alone do
    /// not say which store a row is in: use ``fetch(_:)`` when ``spansStores(_:)``).
    package func fetchKeys(_ request: StoreFetchRequest) throws -> (PersistentStore, [Int64]) {
        let store = try store(for: request.entity)
        return (store, try store.engine.fetchKeys(request))
    }

    /// How many rows a request selects, across the stores that hold its entity.
    package func count(_ request: StoreFetchRequest) throws -> Int {
        let stores = try self.stores(for: request)
        if stores.count == 1 { return try stores[0].engine.count(request) }
        var unwindowed = request
        unwindowed.limit = 0
        unwindowed.offset = 0
        var total = 0
        for store in stores { total += try store.engine.count(unwindowed) }
        total = max(0, total - request.offset)
        return request.limit > 0 ? min(total, request.limit) : total
    }

    /// The results of a dictionary fetch: by the store that holds its entity, or computed over
    /// the rows of every store that does.
    package func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]] {
        let stores = try self.stores(for: request.fetch)
        if stores.count == 1 { return try stores[0].engine.fetchDictionaries(request) }
        if stores.isEmpty { _ = try store(for: request.fetch.entity) }   // the usual "no store" error
        return request.evaluate(try fetch(request.unwindowedFetch, across: stores).map(\.snapshot.values))
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
    package func related(_ relationship: RelationshipDescription, of keys: [Int64], in store: PersistentStore) throws(CoreDataError) -> [(source: Int64, member: ManagedObjectID)] {
        guard !keys.isEmpty else { return [] }
        do { return try store.engine.fetchRelated(relationship, of: keys) } catch { throw Self.wrap(error) }
    }

    /// Permanent IDs for new objects (one per entry, keys allocated per root entity), in `store`
    /// or, without one, in the first store that holds each entity.
    package func obtainPermanentIDs(for entities: [EntityDescription], in store: PersistentStore? = nil) throws(CoreDataError) -> [ManagedObjectID] {
        guard let first = entities.first else { return [] }
        if store == nil, spansConfigurations {
            // Entities of different configurations go to different stores: one call per store.
            var byStore: [ObjectIdentifier: (PersistentStore, [Int])] = [:]
            for (index, entity) in entities.enumerated() {
                let target = try self.store(for: entity)
                byStore[ObjectIdentifier(target), default: (target, [])].1.append(index)
            }
            if byStore.count > 1 {
                var result = [ManagedObjectID?](repeating: nil, count: entities.count)
                for (target, indices) in byStore.values {
                    let ids = try obtainPermanentIDs(for: indices.map { entities[$0] }, in: target)
                    for (index, id) in zip(indices, ids) { result[index] = id }
                }
                return result.compactMap { $0 }
            }
        }
        let store = if let store { store } else { try self.store(for: first) }
        var result: [ManagedObjectID] = []
        result.reserveCapacity(entities.count)
        // One block of keys per root entity, handed out in the order of `entities`. A model has
        // few roots, so a linear search beats hashing every object.
        var roots: [(root: EntityDescription, count: Int, next: Int64)] = []
        // Each entity's root, as an index in `roots`. Entities come in runs (objects inserted
        // together): a run's root is looked up once.
        var rootIndices: [Int] = []
        rootIndices.reserveCapacity(entities.count)
        var previous: (entity: ObjectIdentifier, index: Int)?
        for entity in entities {
            let index: Int
            if let previous, previous.entity == ObjectIdentifier(entity) {
                index = previous.index
            } else {
                let root = entity.rootEntity
                index = roots.firstIndex { $0.root === root } ?? roots.count
                if index == roots.count { roots.append((root, 0, 0)) }
                previous = (ObjectIdentifier(entity), index)
            }
            roots[index].count += 1
            rootIndices.append(index)
        }
        for index in roots.indices {
            do { roots[index].next = try store.engine.allocatePrimaryKeys(root: roots[index].root, count: roots[index].count) } catch {
                throw Self.wrap(error)
            }
        }
        let number = store.number
        for (entity, index) in zip(entities, rootIndices) {
            result.append(.permanent(entity, storeNumber: number, primaryKey: roots[index].next))
            roots[index].next += 1
        }
        return result
    }

    /// Writes a save in one transaction, updates the row cache and hands the save to the
    /// contexts that merge automatically (in commit order: both happen under `saveOrder`).
    /// Returns the conflicts (and writes nothing) when rows changed underneath.
    package func save(_ request: StoreSaveRequest, store: PersistentStore, event makeEvent: () -> SaveEvent) throws -> [StoreConflict] {
        if case .conflicts(let conflicts, _) = try save([(store, request)], event: makeEvent) { return conflicts }
        return []
    }

    /// Writes a save whose objects live in several stores: each store's part in its own
    /// transaction, committed only once every part is written and free of conflicts (each
    /// store's transaction stays open, holding its writer, until the next one is ready). Answers
    /// the first store with conflicts and them (nothing written anywhere), or `saved`.
    ///
    /// When a later store's commit fails after earlier ones committed, what those committed is
    /// kept for `context`'s next save, which leaves it out (`PartialCommits`).
    ///
    /// A save to one store hands its conflicts to `resolve` (the context's merge policy) inside
    /// the store's transaction, with their rows held, and writes the save it makes again
    /// (``StoreEngine/save(_:resolving:beforeCommit:)``); a save across stores answers them.
    package func save(_ parts: [(PersistentStore, StoreSaveRequest)], from context: AnyObject? = nil,
                      resolving resolve: StoreConflictResolver? = nil, event makeEvent: () -> SaveEvent) throws -> SaveResult {
        try saveOrder.withLock {
            let toWrite = try partialCommits.remainder(of: parts, from: context)
            var committed: [(PersistentStore, StoreSaveRequest)] = []
            let result: SaveResult
            do {
                result = try commit(toWrite[...], resolving: toWrite.count == 1 ? resolve : nil, committed: &committed)
            } catch {
                partialCommits.remember(committed, from: context)
                throw error
            }
            guard case .saved = result else { return result }
            partialCommits.forget(context)
            for (store, request) in parts {
                // What was written: the save a merge policy made again, where it did.
                updateRowCache(after: committed.first { $0.0 === store }?.1 ?? request, store: store)
            }
            let receivers = mergingContexts.withLock { contexts in
                contexts.removeAll { $0.context == nil }
                return contexts.compactMap(\.context)
            }
            if !receivers.isEmpty || didSaveEventsBroadcaster.hasSubscribers {
                let event = makeEvent()
                for context in receivers where ObjectIdentifier(context) != event.source {
                    // A block of its own on the context's queue, ending as every event does: the
                    // context's unprocessed edits are processed with it (as Core Data's merge in
                    // `perform` does), so that its observers see them and the merge together.
                    context.perform { context.merge(event) }
                }
                didSaveEventsBroadcaster.send(event)
            }
            return .saved
        }
    }

    /// Writes the parts, nesting each next store's write inside the previous one's open
    /// transaction, so that a part that cannot be written withdraws the ones before it.
    /// `committed` collects the parts whose store committed (in no particular order), each as
    /// it was written (`resolve`, for a save to one store, may have made it again).
    private func commit(_ parts: ArraySlice<(PersistentStore, StoreSaveRequest)>, resolving resolve: StoreConflictResolver?,
                        committed: inout [(PersistentStore, StoreSaveRequest)]) throws -> SaveResult {
        guard let (store, request) = parts.first else { return .saved }
        let rest = parts.dropFirst()
        var later = SaveResult.saved
        var inner: [(PersistentStore, StoreSaveRequest)] = []
        defer { committed.append(contentsOf: inner) }
        var written = request
        let outcome = try store.engine.save(request, resolving: resolve.map { resolve in
            { conflicts in
                let remade = try resolve(conflicts)
                if let remade { written = remade }
                return remade
            }
        }, beforeCommit: rest.isEmpty ? nil : {
            later = try self.commit(rest, resolving: nil, committed: &inner)
            if case .saved = later { return true }
            return false
        })
        switch outcome {
        case .committed:
            committed.append((store, written))
            return .saved
        case .conflicts(let conflicts): return .conflicts(conflicts, in: store)
        case .withdrawn: return later
        }
    }

    /// How a save across the coordinator's stores ended (errors are thrown).
    package enum SaveResult {
        /// Every part was written.
        case saved
        /// Nothing was written: the rows of `store` had moved on (optimistic locking).
        case conflicts([StoreConflict], in: PersistentStore)
    }

    private func updateRowCache(after request: StoreSaveRequest, store: PersistentStore) {
        let number = store.number
        // Rows with derived attributes are changed by the store's triggers after the save wrote
        // them (a count follows its relationship's rows): they are read again, not cached.
        if managedObjectModel.entities.contains(where: \.hasDerivedAttributes) {
            rowCache.removeAll { $0.entity.hasDerivedAttributes }
        }
        // Inserted rows are not cached: the saving context holds them, and caching a large import
        // would only evict rows other contexts use.
        rowCache.remove(request.deletes.map { .permanent($0.entity, storeNumber: number, primaryKey: $0.primaryKey) })
        // The updates as the save made them: the cache makes its rows when it is next used.
        rowCache.storeSaved(request.updates, store: number)
    }

    /// Runs a batch operation on `stores` (default: each store that holds the entity; one
    /// transaction each), in commit order with saves, and drops the affected rows from the row
    /// cache (all of the entity's rows when the keys are unknown).
    package func batch(_ entity: EntityDescription, in stores: [PersistentStore]? = nil,
                       _ operation: (PersistentStore) throws -> BatchOutcome) throws -> [(PersistentStore, BatchOutcome)] {
        let stores = try stores ?? self.stores(holding: entity)
        var outcomes: [(PersistentStore, BatchOutcome)] = []
        for store in stores {
            let outcome = try saveOrder.withLock { try operation(store) }
            if let keys = outcome.keys {
                let number = store.number
                rowCache.remove(keys.map { .permanent(entity, storeNumber: number, primaryKey: $0) })
            } else {
                rowCache.removeAll { $0.entity.rootEntity === entity.rootEntity }
            }
            outcomes.append((store, outcome))
        }
        return outcomes
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
