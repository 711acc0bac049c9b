import Foundation

extension ManagedObjectContext {
    /// Executes a batch request against the store, bypassing contexts: registered objects are not
    /// changed and no did-save notification is posted. To bring contexts up to date, ask for
    /// object IDs and merge them:
    ///
    /// ```swift
    /// request.resultType = .resultTypeObjectIDs
    /// let ids = try context.execute(request).result as? [ManagedObjectID] ?? []
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [viewContext])
    /// ```
    /// An ``AsynchronousFetchRequest`` returns its ``AsynchronousFetchResult`` at once and runs
    /// later on the context's queue. Mirrors `execute(_:)`.
    public func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult {
        checkQueue("execute(_:)")
        if let started = request.startedOnItsOwn(in: self) { return started }
        let coordinator = try requireCoordinator()
        guard let entity = coordinator.managedObjectModel.entitiesByName[request.entityName] else {
            throw CoreDataError(.coreData, "The batch request names the entity '\(request.entityName)', which the model does not have.")
        }
        // The stores the request works on: those that hold the entity, among its affected stores.
        let stores = try coordinator.stores(holding: entity, among: request.affectedStores?.map(\.identifier))
        switch request {
        case let insert as BatchInsertRequest:
            let rows = try BatchInsertRows.converting(insert, entity: entity)
            // New rows go to the first of those stores, as new objects do.
            guard let first = stores.first else {
                throw CoreDataError(.persistentStoreOperation, """
                    None of the batch insert's affected stores holds the entity \(entity.name); name a store \
                    whose configuration includes it.
                    """)
            }
            let outcomes = try coordinator.batch(entity, in: [first]) { store in
                let keys = try store.engine.batchInsert(entity: entity, rows: rows, author: historyAuthor)
                return BatchOutcome(count: keys.count, keys: keys)
            }
            return BatchInsertResult(result: Self.result(insert.resultType.rawValue, outcomes, entity: entity))
        case let update as BatchUpdateRequest:
            var values: [(slot: Int, value: ManagedValue)] = []
            for (key, value) in update.propertiesToUpdate ?? [:] {
                let slot = try entity.slot(forKey: key)
                let attribute = entity.storedAttributes[slot]
                guard let stored = attribute.storedValue(value), !(stored.isNull && !attribute.isOptional) else {
                    throw CoreDataError(.managedObjectValidation, """
                        The batch update sets '\(key)' of \(entity.name) to \(value), which does not fit its \
                        type \
                        \(attribute.attributeType)\(attribute.isOptional ? "" : " (and it is mandatory)").
                        """, key: key)
                }
                guard !stored.isNaN else {
                    throw CoreDataError(.managedObjectValidation, """
                        The batch update sets '\(key)' of \(entity.name) to NaN (not a number), which no store \
                        keeps (SQLite would read it back as nil or 0). Set nil for a missing value.
                        """, key: key)
                }
                values.append((slot, stored))
            }
            let storeRequest = StoreFetchRequest(entity: entity, predicate: try update.predicate?.bind(to: entity))
            let code: UInt = switch update.resultType {
            case .statusOnlyResultType: 0
            case .updatedObjectIDsResultType: 1
            case .updatedObjectsCountResultType: 2
            }
            let outcomes = try coordinator.batch(entity, in: stores) {
                try $0.engine.batchUpdate(storeRequest, values: values, returningKeys: code == 1, author: historyAuthor)
            }
            return BatchUpdateResult(result: Self.result(code, outcomes, entity: entity))
        case let delete as BatchDeleteRequest:
            let code: UInt = switch delete.resultType {
            case .resultTypeStatusOnly: 0
            case .resultTypeObjectIDs: 1
            case .resultTypeCount: 2
            }
            let outcomes: [(PersistentStore, BatchOutcome)]
            if let ids = delete.objectIDs {
                // Each store deletes the keys of its own objects.
                let holding = try coordinator.stores(holding: entity)
                let keysByStore = Dictionary(grouping: ids) { $0.storeIdentifier ?? holding[0].identifier }.mapValues { $0.compactMap(\.primaryKey) }
                let involved = stores.filter { keysByStore[$0.identifier] != nil }
                outcomes = try coordinator.batch(entity, in: involved) { store in
                    let request = StoreFetchRequest(entity: entity, predicate: .primaryKeyIn(keysByStore[store.identifier] ?? []))
                    return try store.engine.batchDelete(request, returningKeys: code == 1, author: historyAuthor)
                }
            } else {
                let storeRequest = StoreFetchRequest(entity: entity, predicate: try delete.predicate?.bind(to: entity))
                outcomes = try coordinator.batch(entity, in: stores) {
                    try $0.engine.batchDelete(storeRequest, returningKeys: code == 1, author: historyAuthor)
                }
            }
            return BatchDeleteResult(result: Self.result(code, outcomes, entity: entity))
        default:
            throw CoreDataError(.coreData, """
                \(type(of: request)) is not a request this store can execute; use BatchInsertRequest, \
                BatchUpdateRequest or BatchDeleteRequest.
                """)
        }
    }

    /// 0: status, 1: object IDs, 2: count (the three result kinds every batch request has).
    private static func result(_ code: UInt, _ outcomes: [(PersistentStore, BatchOutcome)], entity: EntityDescription) -> Any {
        switch code {
        case 1: outcomes.flatMap { store, outcome in
            let number = store.number
            return (outcome.keys ?? []).map { ManagedObjectID.permanent(entity, storeNumber: number, primaryKey: $0) }
        }
        case 2: outcomes.reduce(0) { $0 + $1.1.count }
        default: true
        }
    }
}
