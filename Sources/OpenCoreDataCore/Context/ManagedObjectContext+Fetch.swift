import Foundation

extension ManagedObjectContext {
    /// The objects matching a request. Objects already registered in the context keep their
    /// in-memory state; with ``FetchRequest/includesPendingChanges`` (the default) unsaved
    /// inserts, changes and deletes of the context count. Throws ``CoreDataError`` for an unknown
    /// entity or key, a malformed predicate or a type mismatch.
    ///
    /// An untyped request (`FetchRequest<any FetchRequestResult>`, Core Data's
    /// `NSFetchRequest<NSFetchRequestResult>`) returns whatever its ``FetchRequest/resultType``
    /// asks for; cast the array (`as? [ManagedObject]`, `as? [NSDictionary]`…) as in Core Data.
    public func fetch<T>(_ request: FetchRequest<T>) throws -> [T] {
        checkQueue("fetch(_:)")
        if FetchRequest<T>.isUntyped { return try fetchUntyped(request) }
        switch request.resultType {
        case .managedObjectResultType:
            guard T.self is ManagedObject.Type else { throw resultTypeMismatch(request) }
            // `plan` checked that the entity's objects are T.
            return unsafeBitCast(try fetchObjects(request), to: [T].self)
        case .managedObjectIDResultType:
            guard T.self == ManagedObjectID.self else { throw resultTypeMismatch(request) }
            let plan = try plan(for: request)
            // Keys alone do not say which sub-entity a row is: hierarchies read rows.
            if !plan.usesPendingChanges && parent == nil && plan.entity.subentities.isEmpty && !plan.spansStores {
                // IDs straight from the keys: no values read, no objects made.
                let (store, keys) = try reading { try plan.coordinator.fetchKeys(plan.storeRequest) }
                let number = store.number
                return keys.compactMap { ManagedObjectID.permanent(plan.entity, storeNumber: number, primaryKey: $0) as? T }
            }
            return try fetchObjects(request).compactMap { $0.objectID as? T }
        case .countResultType:
            guard T.self == NSNumber.self else { throw resultTypeMismatch(request) }
            return [NSNumber(value: try count(for: request))].compactMap { $0 as? T }
        case .dictionaryResultType:
            guard T.self == NSDictionary.self else { throw resultTypeMismatch(request) }
            return try fetchDictionaries(request).compactMap { $0 as? T }
        }
    }

    /// An untyped request's results, each cast to the request's `ResultType` (an existential,
    /// `Any` or `AnyObject`); a result type nothing can be cast to is a mismatch.
    private func fetchUntyped<T>(_ request: FetchRequest<T>) throws -> [T] {
        let results: [Any]
        switch request.resultType {
        case .managedObjectResultType: results = try fetchObjects(request)
        case .managedObjectIDResultType: results = try fetchObjects(request).map(\.objectID)
        case .countResultType: results = [NSNumber(value: try count(for: request))]
        case .dictionaryResultType: results = try fetchDictionaries(request)
        }
        var cast: [T] = []
        cast.reserveCapacity(results.count)
        for result in results {
            guard let typed = result as? T else { throw resultTypeMismatch(request) }
            cast.append(typed)
        }
        return cast
    }

    private func resultTypeMismatch<T>(_ request: FetchRequest<T>) -> CoreDataError {
        CoreDataError(.coreData, """
            The fetch request's resultType \(request.resultType) does not fit FetchRequest<\(T.self)>: use \
            FetchRequest<ManagedObjectID> for object IDs, FetchRequest<NSDictionary> for dictionaries, \
            FetchRequest<NSNumber> for counts, and a managed object class for objects.
            """)
    }

    /// The managed objects a request selects (any result type: IDs and dictionaries start here).
    package func fetchObjects<T>(_ request: FetchRequest<T>, ignoringWindow: Bool = false) throws -> [ManagedObject] {
        var plan = try plan(for: request)
        if ignoringWindow {
            plan.storeRequest.limit = 0
            plan.storeRequest.offset = 0
            plan.limit = 0
            plan.offset = 0
        }
        let refresh = request.shouldRefreshRefetchedObjects
        if let parent {
            // A child sees its parent's state, unsaved changes included (the parent asks its own
            // parent in turn); its own pending changes, order and window are applied here.
            let storeRequest = plan.storeRequest
            let rows = try parent.performAndWait { try parent.rowsForChild(storeRequest) }
            let objects = rows.map { registeredObject(for: $0.id, snapshot: $0.snapshot, refresh: refresh) }
            return applyPendingChanges(to: objects, plan: plan)
        }
        if !request.includesPropertyValues && !plan.usesPendingChanges && plan.entity.subentities.isEmpty && !plan.spansStores {
            let (store, keys) = try reading { try plan.coordinator.fetchKeys(plan.storeRequest) }
            let number = store.number
            return keys.map { object(with: .permanent(plan.entity, storeNumber: number, primaryKey: $0)) }
        }
        let (store, rows) = try fetchRows(plan.storeRequest, coordinator: plan.coordinator)
        graph.reserveRegistry(rows.count)
        let number = store.number
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            let object = registeredObject(for: row, storeNumber: row.storeNumber ?? number, refresh: refresh)
            // The object registered under the row's key must be of the row's entity (or a
            // sub-entity): else the store named two entities for one row (a damaged file whose
            // index and table disagree; found by the store fuzzer), and the object would join
            // results of an entity it is not. (The same entity is asked first: walking up the
            // entity's ancestors costs reference counting per row.)
            guard object.entity === row.entity || object.entity.isKindOf(entity: row.entity) else {
                throw CoreDataError(.persistentStoreInvalidType, """
                    The store returned the row \(row.primaryKey) of \(row.entity.rootEntity.name) as \
                    \(row.entity.name), but this context holds it as \(object.entity.name) (read from the same \
                    store, or made from an ID naming that entity): the store file is damaged if nothing else \
                    named it so (its indexes disagree with its tables). Check it with PRAGMA integrity_check \
                    and restore it from a backup.
                    """)
            }
            objects.append(object)
        }
        for keyPath in request.relationshipKeyPathsForPrefetching {
            try prefetch(keyPath, of: objects, coordinator: plan.coordinator)
        }
        return plan.usesPendingChanges ? applyPendingChanges(to: objects, plan: plan) : objects
    }

    /// Loads the destinations of a relationship key path for fetched objects: to-one
    /// destinations' rows in one query, to-many members in one query and their rows in another.
    private func prefetch(_ keyPath: String, of objects: [ManagedObject], coordinator: PersistentStoreCoordinator) throws {
        let (name, rest) = keyPath.firstIndex(of: ".").map { (String(keyPath[..<$0]), String(keyPath[keyPath.index(after: $0)...])) } ?? (keyPath, "")
        var destinations: [ManagedObjectID] = []
        var sourcesByEntity: [RelationshipInStore: (RelationshipDescription, [ManagedObject])] = [:]
        for object in objects where !object.isFaultFlag && !object.isDeletedFlag {
            guard let relationship = object.entity.relationshipsByName[name] else {
                throw CoreDataError(.coreData, """
                    relationshipKeyPathsForPrefetching names '\(keyPath)', but \(object.entity.name) has no \
                    relationship '\(name)'.
                    """, key: keyPath)
            }
            if relationship.isToMany {
                if let index = object.entity.toManyIndexByName[name], index < object.toMany.count, object.toMany[index].isLoaded { continue }
                sourcesByEntity[RelationshipInStore(relationship: ObjectIdentifier(relationship), store: object.objectID.storeNumber), default: (relationship, [])].1.append(object)
            } else if let id = destination(of: object, relationship) {
                destinations.append(id)
            }
        }
        for (relationship, sources) in sourcesByEntity.values {
            let keys = sources.compactMap(\.objectID.primaryKey)
            guard let first = sources.first else { continue }
            let store = try coordinator.store(for: first.objectID)
            var members: [Int64: [ManagedObjectID]] = [:]
            for pair in try reading({ try coordinator.related(relationship, of: keys, in: store) }) {
                members[pair.source, default: []].append(pair.member)
            }
            for source in sources {
                guard let key = source.objectID.primaryKey, let index = toManyStateIndex(of: source, relationship) else { continue }
                source.toMany[index].load(members[key] ?? [])
                destinations += members[key] ?? []
            }
        }
        let loaded = try loadRows(of: destinations, coordinator: coordinator)
        if !rest.isEmpty { try prefetch(rest, of: loaded, coordinator: coordinator) }
    }

    /// Registers the objects for IDs with their rows (reading only the ones not loaded yet), in
    /// one query per root entity, store and 500 keys.
    private func loadRows(of ids: [ManagedObjectID], coordinator: PersistentStoreCoordinator) throws -> [ManagedObject] {
        var missing: [RootInStore: (EntityDescription, [Int64])] = [:]
        var result: [ManagedObject] = []
        var seen = Set<ManagedObjectID>()
        for id in ids where seen.insert(id).inserted {
            let object = self.object(with: id)
            result.append(object)
            if object.isFaultFlag, let key = id.primaryKey {
                missing[RootInStore(root: ObjectIdentifier(id.entity.rootEntity), store: id.storeNumber), default: (id.entity.rootEntity, [])].1.append(key)
            }
        }
        for (place, (root, keys)) in missing {
            let store = try coordinator.store(for: ManagedObjectID.permanent(root, storeNumber: place.store, primaryKey: keys[0]))
            for start in stride(from: 0, to: keys.count, by: 500) {
                let request = StoreFetchRequest(entity: root, predicate: .primaryKeyIn(Array(keys[start..<min(start + 500, keys.count)])))
                let rows: [StoreRow]
                do { rows = try reading { try coordinator.fetch(request, from: store) } } catch { throw PersistentStoreCoordinator.wrap(error) }
                let number = store.number
                for row in rows { _ = registeredObject(for: row, storeNumber: number, refresh: false) }
            }
        }
        return result
    }

    /// The number of objects a request would return. Mirrors `count(for:)`.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        checkQueue("count(for:)")
        let plan = try plan(for: request)
        if plan.usesPendingChanges { return try fetchObjects(request).count }
        do { return try reading { try plan.coordinator.count(plan.storeRequest) } } catch { throw PersistentStoreCoordinator.wrap(error) }
    }

    // MARK: - Internals

    package struct FetchPlan {
        var coordinator: PersistentStoreCoordinator
        var entity: EntityDescription
        var storeRequest: StoreFetchRequest
        var usesPendingChanges: Bool
        /// Whether the entity's objects may live in several stores (results then come from each).
        var spansStores: Bool
        var limit: Int
        var offset: Int
    }

    package func plan<T>(for request: FetchRequest<T>) throws -> FetchPlan {
        let coordinator = try requireCoordinator()
        let model = coordinator.managedObjectModel
        let entity: EntityDescription
        if let given = request.entity, given.managedObjectModel === model {
            entity = given
        } else if let name = request.entity?.name ?? request.entityName, let found = model.entitiesByName[name] {
            entity = found
        } else {
            let names = model.entitiesByName.keys.sorted().joined(separator: ", ")
            throw CoreDataError(.coreData, """
                The fetch request names the entity '\(request.entity?.name ?? request.entityName ?? "")', \
                which the model does not have. Its entities are: \(names).
                """)
        }
        guard request.resultType != .managedObjectResultType || FetchRequest<T>.isUntyped || entity.managedObjectClass is T.Type else {
            throw CoreDataError(.coreData, """
                The entity \(entity.name) is represented by \(entity.managedObjectClass), which is not \
                \(T.self). Use FetchRequest<\(entity.managedObjectClass)> or FetchRequest<ManagedObject>.
                """)
        }
        let predicate = try request.predicate?.bind(to: entity)
        var sort: [StoreSortKey] = []
        for descriptor in request.sortDescriptors ?? [] {
            guard let key = descriptor.key else { continue }
            let (path, slot) = try StoreSortKey.resolve(key, in: entity)
            guard let comparator = SortComparator(selector: descriptor.selector ?? "compare:") else {
                throw CoreDataError(.coreData, """
                    The sort descriptor for '\(key)' uses the selector '\(descriptor.selector ?? "")'; use \
                    compare:, caseInsensitiveCompare:, localizedStandardCompare:, \
                    localizedCaseInsensitiveCompare: or localizedCompare:.
                    """, key: key)
            }
            sort.append(StoreSortKey(slot: slot, ascending: descriptor.ascending, comparator: comparator, path: path))
        }
        guard request.fetchLimit >= 0, request.fetchOffset >= 0 else {
            throw CoreDataError(.coreData, "fetchLimit and fetchOffset must not be negative (got \(request.fetchLimit) and \(request.fetchOffset)).")
        }
        let root = entity.rootEntity
        let usesPending = parent != nil || request.includesPendingChanges

                && (graph.pending.liveInserts(in: self).contains { $0.entity.rootEntity === root } || graph.pending.liveChanges(in: self).contains { $0.entity.rootEntity === root })
        let storeRequest = StoreFetchRequest(
            entity: entity, predicate: predicate, sort: sort,
            limit: usesPending ? 0 : request.fetchLimit, offset: usesPending ? 0 : request.fetchOffset,
            includesSubentities: request.includesSubentities, storeIdentifiers: request.affectedStores?.map(\.identifier))
        // Affected stores take the path that reads rows store by store (keys alone say no store).
        return FetchPlan(coordinator: coordinator, entity: entity, storeRequest: storeRequest, usesPendingChanges: usesPending,
                         spansStores: request.affectedStores != nil || coordinator.spansStores(entity), limit: request.fetchLimit, offset: request.fetchOffset)
    }

    private func fetchRows(_ request: StoreFetchRequest, coordinator: PersistentStoreCoordinator) throws -> (PersistentStore, [StoreRow]) {
        do { return try reading { try coordinator.fetch(request) } } catch { throw PersistentStoreCoordinator.wrap(error) }
    }

    /// The registered object for a fetched row, made (and registered) when there is none.
    private func registeredObject(for row: StoreRow, storeNumber: UInt32, refresh: Bool) -> ManagedObject {
        registeredObject(for: ManagedObjectID.permanent(row.entity, storeNumber: storeNumber, primaryKey: row.primaryKey), snapshot: row.snapshot,
                         refresh: refresh)
    }

    /// The registered object for an ID with a known committed state, made when there is none.
    package func registeredObject(for id: ManagedObjectID, snapshot: RowSnapshot, refresh: Bool) -> ManagedObject {
        // One probe of the registry for a row met for the first time: its miss says where the
        // new object goes.
        let (registered, probe) = graph.probeRegistry(id)
        if let existing = registered ?? insertedObject(for: id) {
            if existing.isFaultFlag || (refresh && !existing.hasChanges) {
                fulfil(existing, with: snapshot)
            }
            return existing
        }
        // (An object inserted in an ancestor and not saved yet is registered by its temporary ID.)
        let object = ManagedObject.materialize(entity: id.entity, id: id, context: self, snapshot: snapshot)
        graph.register(object, at: probe)
        awakeFetched(object)
        return object
    }

    /// Applies the context's unsaved changes to store results: deleted objects leave, changed
    /// ones are re-checked against the predicate, matching inserted ones join; then sort and window.
    package func applyPendingChanges(to fetched: [ManagedObject], plan: FetchPlan) -> [ManagedObject] {
        let request = plan.storeRequest
        let pendingResults = PendingResults(context: self, request: request)
        var result = fetched.filter(pendingResults.keeps)
        let read = Set(result.map(ObjectIdentifier.init))
        result += pendingResults.joining { read.contains(ObjectIdentifier($0)) }
        result = ResultOrder(request.sort, entity: request.entity).sorted(result)
        if plan.offset > 0 { result = Array(result.dropFirst(plan.offset)) }
        if plan.limit > 0 { result = Array(result.prefix(plan.limit)) }
        return result
    }
}

/// A relationship of the objects of one store (prefetching asks each store for its own).
private struct RelationshipInStore: Hashable {
    var relationship: ObjectIdentifier
    var store: UInt32
}

/// A root entity's rows in one store.
private struct RootInStore: Hashable {
    var root: ObjectIdentifier
    var store: UInt32
}
