import Foundation

/// Copies every object of one store into another, empty one, of any type (what
/// `migratePersistentStore(_:to:options:type:)` does between store types): rows under their
/// own keys, so that to-one values and join rows keep pointing at the same objects; many-to-many
/// pairs; the order of ordered relationships; each entity's key counter; the app's metadata; the
/// store's UUID, so that object IDs and their URIs name the same objects in the copy; and its
/// persistent history when both record it, under the same numbers, so that history tokens keep
/// their meaning (the copying itself is not recorded).
package enum StoreCopy {
    /// Rows read and inserted per save (a save is one transaction of the destination).
    private static let batch = 5_000
    /// History transactions read and written at a time.
    private static let historyPage = 1_000

    /// Throws 134070 when `destination` holds objects of any entity of `model`.
    package static func requireEmpty(_ destination: any StoreEngine, model: ManagedObjectModel) throws {
        for root in roots(of: model) where try destination.count(StoreFetchRequest(entity: root)) > 0 {
            throw CoreDataError(.persistentStoreOperation, """
                The destination store already holds \(root.name) objects; migrate into a new file or an empty \
                schema.
                """)
        }
    }

    private static func roots(of model: ManagedObjectModel) -> [EntityDescription] {
        model.entities.filter { $0.superentity == nil }.sorted { $0.name < $1.name }
    }

    package static func copy(from source: any StoreEngine, to destination: any StoreEngine, model: ManagedObjectModel) throws {
        try requireEmpty(destination, model: model)
        try destination.adoptIdentifier(source.identifier)
        for root in roots(of: model) {
            // Keys first (8 bytes a row), then the rows a batch at a time: a copy holds one
            // batch of rows in memory, whatever the size of the store.
            let keys = try source.fetchKeys(StoreFetchRequest(entity: root)).sorted()
            // Keys given from now on come after the copied ones, and after the keys of objects
            // the source deleted (an object ID never names two objects).
            let given = max(keys.last ?? 0, try source.lastPrimaryKey(root: root))
            if given > 0 { _ = try destination.allocatePrimaryKeys(root: root, count: Int(given)) }
            for start in stride(from: 0, to: keys.count, by: batch) {
                var rows: [StoreRow] = []
                // Keys bound 500 to a statement (under SQLite builds limited to 999 variables).
                for chunk in stride(from: start, to: min(start + batch, keys.count), by: 500) {
                    rows += try source.fetch(StoreFetchRequest(entity: root,
                                                               predicate: .primaryKeyIn(Array(keys[chunk..<min(chunk + 500, keys.count)]))))
                }
                try copy(rows, from: source, to: destination)
            }
        }
        if source.tracksHistory, destination.tracksHistory {
            // A page of transactions (with their changes) at a time, each written in one
            // transaction of the destination.
            var last: Int64 = 0
            try source.forEachHistoryPage(after: nil, date: nil, size: historyPage, includingChanges: true) { page in
                last = page.last?.number ?? last
                try destination.importHistory(page, lastNumber: last)
                return true
            }
            try destination.importHistory([], lastNumber: max(try source.lastHistoryNumber() ?? 0, last))
        }
        let appKeys = try source.metadata().filter { !$0.key.hasPrefix("NS") && !$0.key.hasPrefix("_NS") }
        if !appKeys.isEmpty { try destination.setMetadata(appKeys) }
    }

    /// Writes a batch of one root's rows into `destination` under their own keys, then the
    /// relationships kept outside the rows (many-to-many pairs and member orders) of those rows.
    private static func copy(_ rows: [StoreRow], from source: any StoreEngine, to destination: any StoreEngine) throws {
        guard !rows.isEmpty else { return }
        var inserts = StoreSaveRequest()
        inserts.recordsHistory = false
        inserts.inserts = rows.map {
            StoreSaveRequest.Insert(entity: $0.entity, primaryKey: $0.primaryKey, values: $0.snapshot.values.map { value in
                // To-ones name the destination store (the in-memory store keeps IDs as given).
                guard case .object(let id) = value, let key = id.primaryKey else { return value }
                return .object(.permanent(id.entity, storeNumber: destination.storeNumber, primaryKey: key))
            })
        }
        try save(inserts, to: destination)
        var request = StoreSaveRequest()
        request.recordsHistory = false
        for (entity, keys) in Dictionary(grouping: rows, by: { ObjectIdentifier($0.entity) }).values.map({ ($0[0].entity, $0.map(\.primaryKey)) }) {
            for relationship in entity.toManyRelationships
                where !relationship.isTransient && (relationship.isOrdered || relationship.inverseRelationship?.isToMany == true) {
                let members = try source.fetchRelated(relationship, of: keys)
                if relationship.inverseRelationship?.isToMany == true {
                    request.joins += members.compactMap { pair in
                        pair.member.primaryKey.map {
                            StoreSaveRequest.JoinChange(relationship: relationship, source: pair.source, destination: $0, isInsert: true)
                        }
                    }
                }
                if relationship.isOrdered {
                    for (source, group) in Dictionary(grouping: members, by: \.source) {
                        request.orders.append(StoreSaveRequest.OrderChange(relationship: relationship, source: source, members: group.compactMap(\.member.primaryKey)))
                    }
                }
            }
        }
        if !request.joins.isEmpty || !request.orders.isEmpty { try save(request, to: destination) }
    }

    private static func save(_ request: StoreSaveRequest, to destination: any StoreEngine) throws {
        guard case .committed = try destination.save(request, resolving: nil, beforeCommit: nil) else {
            throw CoreDataError(.persistentStoreOperation, """
                Another writer changed the destination store while objects were copied into it; migrate into a \
                store nobody else uses.
                """)
        }
    }
}
