import Foundation

/// Which store holds which entities. A store added with a configuration holds that
/// configuration's entities; one added without (or with Core Data's default configuration name)
/// holds them all. New objects go to the first store that holds their entity (or the one
/// `assign(_:to:)` names); fetches read every store that holds the entity; a save writes each
/// object to the store its ID names.
struct Routing {
    /// In the order they were added.
    var stores: [PersistentStore] = []
    /// Per store (by UUID), the names of the entities its configuration holds; absent: all.
    var entityNames: [String: Set<String>] = [:]

    func holds(_ store: PersistentStore, _ entity: EntityDescription) -> Bool {
        entityNames[store.identifier]?.contains(entity.name) ?? true
    }
}

extension PersistentStoreCoordinator {
    /// Core Data's name for the configuration of every entity.
    static let defaultConfigurationName = "PF_DEFAULT_CONFIGURATION_NAME"

    /// The entities a configuration names (`nil`: all); throws for a name the model lacks.
    func entityNames(ofConfiguration name: String?) throws(CoreDataError) -> Set<String>? {
        guard let name, name != Self.defaultConfigurationName, name != "Default" || managedObjectModel.configurations["Default"] != nil else {
            return nil
        }
        guard let names = managedObjectModel.configurations[name] else {
            let known = managedObjectModel.configurations.keys.sorted()
            throw CoreDataError(.persistentStoreOpen, """
                The model has no configuration named \
                '\(name)'\(known.isEmpty ? " (it has none)" : "; it has \(known.joined(separator: ", "))"). \
                Pass one of those, or nil for every entity.
                """)
        }
        return Set(names)
    }

    /// Whether some store holds only part of the model (then entities are routed).
    var spansConfigurations: Bool { routing.withLock { !$0.entityNames.isEmpty || $0.stores.count > 1 } }

    /// The stores that hold `entity`, in the order they were added; throws when none does.
    package func stores(holding entity: EntityDescription) throws(CoreDataError) -> [PersistentStore] {
        let stores = routing.withLock { routing in
            routing.stores.count == 1 && routing.entityNames.isEmpty ? routing.stores : routing.stores.filter { routing.holds($0, entity) }
        }
        guard stores.isEmpty else { return stores }
        throw noStore(for: entity)
    }

    /// The stores a request reads: those that hold its entity, among its affected stores when it
    /// names them (possibly none).
    package func stores(for request: StoreFetchRequest) throws(CoreDataError) -> [PersistentStore] {
        try stores(holding: request.entity, among: request.storeIdentifiers)
    }

    /// The stores that hold `entity`, among the identified ones when `identifiers` is given.
    package func stores(holding entity: EntityDescription, among identifiers: [String]?) throws(CoreDataError) -> [PersistentStore] {
        let stores = try stores(holding: entity)
        guard let identifiers else { return stores }
        return stores.filter { identifiers.contains($0.identifier) }
    }

    /// The store new objects of `entity` go to: the first that holds it.
    package func store(for entity: EntityDescription) throws(CoreDataError) -> PersistentStore {
        let store = routing.withLock { routing in
            routing.entityNames.isEmpty ? routing.stores.first : routing.stores.first { routing.holds($0, entity) }
        }
        guard let store else { throw noStore(for: entity) }
        return store
    }

    /// Whether objects of `entity` may live in more than one store (results then come from
    /// several, and keys alone do not say which store a row is in).
    package func spansStores(_ entity: EntityDescription) -> Bool {
        routing.withLock { routing in
            guard routing.stores.count > 1 else { return false }
            var holding = 0
            for store in routing.stores where routing.holds(store, entity) { holding += 1 }
            return holding > 1
        }
    }

    private func noStore(for entity: EntityDescription) -> CoreDataError {
        if persistentStores.isEmpty {
            return CoreDataError(.persistentStoreOperation, """
                The persistent store coordinator has no store. Call loadPersistentStores() on the container \
                (or add a store) before fetching or saving.
                """)
        }
        return CoreDataError(.persistentStoreOperation, """
            No store of this coordinator holds the entity \(entity.name): every store was added with a \
            configuration that leaves it out. Add a store whose configuration includes \(entity.name) (or one \
            without a configuration).
            """)
    }

    /// One request's rows from several stores: each store is asked for the rows up to the end of
    /// the window, the rows are merged in the request's order (ties: by store, then key), and
    /// the window is applied to the whole.
    func fetch(_ request: StoreFetchRequest, across stores: [PersistentStore]) throws -> [StoreRow] {
        var perStore = request
        perStore.offset = 0
        perStore.limit = request.limit > 0 ? request.limit.addingSaturated(request.offset) : 0
        var tagged: [(store: Int, row: StoreRow)] = []
        for (index, store) in stores.enumerated() {
            let number = index > 0 ? store.number : nil
            for var row in try store.engine.fetch(perStore) {
                row.storeNumber = number
                tagged.append((index, row))
            }
        }
        if !request.sort.isEmpty {
            // A relationship's destination is in its source's store: each row's sort values
            // through to-ones are read from its own store.
            let readers = stores.map { StoreRowReader(engine: $0.engine) }
            let decorated = tagged.map { tagged in
                (values: StoreSortKey.values(of: tagged.row, entity: request.entity, keys: request.sort, storeNumber: stores[tagged.store].number,
                                             graph: readers[tagged.store]), tagged: tagged)
            }
            if let error = readers.lazy.compactMap(\.error).first { throw error }
            tagged = decorated.sorted { a, b in
                StoreSortKey.precedes(a.values, b.values, by: request.sort)
                    ?? (a.tagged.store != b.tagged.store ? a.tagged.store < b.tagged.store : a.tagged.row.primaryKey < b.tagged.row.primaryKey)
            }.map(\.tagged)
        }
        var rows = tagged.dropFirst(request.offset).map(\.row)
        if request.limit > 0, rows.count > request.limit { rows.removeLast(rows.count - request.limit) }
        return rows
    }

    /// The ID of a fetched row (`store`: the store ``fetch(_:)`` returned).
    package func objectID(of row: StoreRow, in store: PersistentStore) -> ManagedObjectID {
        .permanent(row.entity, storeNumber: row.storeNumber ?? store.number, primaryKey: row.primaryKey)
    }
}
