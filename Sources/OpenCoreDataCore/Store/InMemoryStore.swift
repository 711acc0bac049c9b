import Foundation

/// A store kept in memory: for tests and caches. Same semantics as the SQLite store (versions,
/// conflicts, primary keys per root entity), gone when its coordinator is.
package final class InMemoryStore: StoreEngine {
    struct Table {
        var rows: [Int64: StoreRow] = [:]
        var maxKey: Int64 = 0
    }
    struct Pair: Hashable {
        var source: Int64
        var destination: Int64
    }
    /// Everything the store holds; owned by the `state` lock.
    struct State {
        var tables: [String: Table] = [:]
        /// Many-to-many rows, by relationship, recorded from both sides.
        var joins: [ObjectIdentifier: Set<Pair>] = [:]
        /// Member order of ordered relationships, by relationship and source key.
        var orders: [ObjectIdentifier: [Int64: [Int64]]] = [:]
        /// Persistent history, oldest first, and the last transaction number issued.
        var history: [HistoryTransactionRecord] = []
        var lastTransaction: Int64 = 0
        var lastChange: Int64 = 0
        var model: ManagedObjectModel?
        var closed = false
        /// The app's metadata keys (``setMetadata(_:)``).
        var appMetadata: [String: any Sendable] = [:]
    }
    // Its own lock (read inside `state`'s): set once more, before any object exists, by
    // ``adoptIdentifier(_:)``.
    private let uuid = StoreIdentity(UUID().uuidString)
    package var identifier: String { uuid.identifier }
    package var storeNumber: UInt32 { uuid.number }
    /// An in-memory store is always writable.
    package var isReadOnly: Bool { false }
    let state = Locked(State())
    /// Whether saves and batch requests record persistent history.
    package let tracksHistory: Bool
    private let changeHandler = Locked<(@Sendable () -> Void)?>(nil)

    package init(tracksHistory: Bool = false) {
        self.tracksHistory = tracksHistory
    }

    package func load(model: ManagedObjectModel) throws {
        state.withLock { $0.model = model }
    }

    package func metadata() throws -> [String: any Sendable] {
        let (model, app) = state.withLock { ($0.model, $0.appMetadata) }
        return app.merging([
            "NSStoreType": PersistentStore.StoreType.inMemory.rawValue,
            "NSStoreUUID": identifier,
            "NSStoreModelVersionHashes": model?.entityVersionHashesByName ?? [:],
        ]) { _, own in own }
    }

    package func adoptIdentifier(_ identifier: String) throws {
        uuid.set(identifier)
    }

    package func setMetadata(_ metadata: [String: Any]) throws {
        guard PropertyListSerialization.propertyList(metadata, isValidFor: .binary) else {
            throw CoreDataError(.persistentStoreOperation, """
                Store metadata must be property-list values (strings, numbers, dates, data, arrays and \
                dictionaries of them); nothing was written.
                """)
        }
        if let uuid = metadata["NSStoreUUID"] as? String, uuid != identifier {
            throw CoreDataError(.persistentStoreOperation, "The UUID of a store added to a coordinator cannot change (its objects' IDs name it).")
        }
        let own: Set<String> = ["NSStoreType", "NSStoreUUID", "NSStoreModelVersionHashes"]
        var app: [String: any Sendable] = [:]
        for (key, value) in metadata where !own.contains(key) { app[key] = sendablePropertyListValue(value) }
        state.withLock { $0.appMetadata = app }
    }

    package func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        var graph: (any GraphResolver)?
        var rows = try matching(request, graph: &graph)
        rows = StoreSortKey.sorted(rows, of: request.entity, by: request.sort, storeNumber: storeNumber, graph: graph)
        if request.offset > 0 { rows = Array(rows.dropFirst(request.offset)) }
        if request.limit > 0 { rows = Array(rows.prefix(request.limit)) }
        return rows
    }

    package func fetchKeys(_ request: StoreFetchRequest) throws -> [Int64] {
        try fetch(request).map(\.primaryKey)
    }

    package func count(_ request: StoreFetchRequest) throws -> Int {
        var count = try matching(request).count - request.offset
        if request.limit > 0 { count = min(count, request.limit) }
        return max(0, count)
    }

    package func row(entity: EntityDescription, primaryKey: Int64) throws -> StoreRow? {
        try state.withLock { state in
            try Self.checkOpen(state)
            return state.tables[entity.rootEntity.name]?.rows[primaryKey]
        }
    }

    package func fetchRelated(_ relationship: RelationshipDescription, of primaryKeys: [Int64]) throws -> [(source: Int64, member: ManagedObjectID)] {
        try state.withLock { state in
            try Self.checkOpen(state)
            return primaryKeys.sorted().flatMap { key in Self.related(relationship, of: key, in: state, store: storeNumber).map { (key, $0) } }
        }
    }

    private static func related(_ relationship: RelationshipDescription, of primaryKey: Int64, in state: State, store: UInt32) -> [ManagedObjectID] {
        guard let destination = relationship.destinationEntity else { return [] }
        let table = state.tables[destination.rootEntity.name]?.rows ?? [:]
        return relatedKeys(relationship, of: primaryKey, in: state).compactMap { key in
            table[key].map { .permanent($0.entity, storeNumber: store, primaryKey: key) }
        }
    }

    /// The keys of a to-many's destinations of a row, in member order.
    private static func relatedKeys(_ relationship: RelationshipDescription, of primaryKey: Int64, in state: State) -> [Int64] {
        guard let destination = relationship.destinationEntity else { return [] }
        let table = state.tables[destination.rootEntity.name]?.rows ?? [:]
        var keys: [Int64]
        if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            keys = table.values.compactMap { row in
                guard row.entity.isKindOf(entity: destination), let slot = row.entity.toOneSlotByName[inverse.name],
                      case .object(let id) = row.snapshot.values[slot], id.primaryKey == primaryKey else { return nil }
                return row.primaryKey
            }
        } else {
            keys = (state.joins[ObjectIdentifier(relationship)] ?? []).filter { $0.source == primaryKey }.map(\.destination)
        }
        keys.sort()
        if let order = state.orders[ObjectIdentifier(relationship)]?[primaryKey] {
            let position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            keys.sort { (position[$0] ?? .max, $0) < (position[$1] ?? .max, $1) }
        }
        return keys
    }

    /// The graph as stored, for predicates across relationships.
    private struct StoredGraph: GraphResolver {
        let state: State
        let store: UInt32
        func values(of id: ManagedObjectID) -> [ManagedValue]? {
            id.primaryKey.flatMap { state.tables[id.entity.rootEntity.name]?.rows[$0]?.snapshot.values }
        }
        func members(_ relationship: RelationshipDescription, of id: ManagedObjectID) -> [ManagedObjectID] {
            id.primaryKey.map { InMemoryStore.related(relationship, of: $0, in: state, store: store) } ?? []
        }
    }

    package func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64 {
        try state.withLock { state in
            try Self.checkOpen(state)
            let first = state.tables[root.name, default: Table()].maxKey + 1
            state.tables[root.name, default: Table()].maxKey += Int64(count)
            return first
        }
    }

    package func lastPrimaryKey(root: EntityDescription) throws -> Int64 {
        try state.withLock { state in
            try Self.checkOpen(state)
            return state.tables[root.name]?.maxKey ?? 0
        }
    }

    package func batchInsert(entity: EntityDescription, rows: StoredRows, author: HistoryAuthor) throws -> [Int64] {
        defer { notifyChange() }
        // Rows match as the SQL stores' unique index matches them: rows of the entity that declares
        // the constraint and its sub-entities, never on a nil value.
        let constraint = entity.upsertConstraint
        let unique = constraint?.properties ?? []
        return try state.withLock { state in
            try Self.checkOpen(state)
            let root = entity.rootEntity.name
            var table = state.tables[root, default: Table()]
            var byKey: [[ManagedValue]: Int64] = [:]
            if let constraint {
                for row in table.rows.values where row.entity.isKindOf(entity: constraint.declaringEntity) {
                    let values = row.entity.values(named: unique, in: row.snapshot.values)
                    if !values.contains(where: \.isNull) { byKey[values] = row.primaryKey }
                }
            }
            var keys: [Int64] = []
            var kinds: [PersistentHistoryChange.ChangeType] = []   // an upserted row is an update in history
            for row in rows {
                let values = Array(row)
                let constraintKey = entity.values(named: unique, in: values)
                let matchable = !unique.isEmpty && !constraintKey.contains(where: \.isNull)
                if matchable, let existing = byKey[constraintKey], let row = table.rows[existing] {
                    // The matched row keeps its entity and takes the values it has slots for.
                    var updated = row.snapshot.values
                    if row.entity === entity {
                        updated = values
                    } else {
                        for (name, slot) in entity.slotByName.merging(entity.toOneSlotByName, uniquingKeysWith: { a, _ in a }) {
                            if let target = row.entity.valueSlot(named: name) { updated[target] = values[slot] }
                        }
                    }
                    table.rows[existing] = StoreRow(entity: row.entity, primaryKey: existing,
                                                    snapshot: RowSnapshot(values: updated, version: row.snapshot.version + 1))
                    keys.append(existing)
                    kinds.append(.update)
                    continue
                }
                table.maxKey += 1
                table.rows[table.maxKey] = StoreRow(entity: entity, primaryKey: table.maxKey, snapshot: RowSnapshot(values: values, version: 1))
                if matchable { byKey[constraintKey] = table.maxKey }
                keys.append(table.maxKey)
                kinds.append(.insert)
            }
            state.tables[root] = table
            if tracksHistory {
                Self.record(&state, author: author, changes: zip(kinds, keys).map { StoreHistoryChange(type: $0, entity: entity, primaryKey: $1) })
            }
            return keys
        }
    }

    package func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool,
                             author: HistoryAuthor) throws -> BatchOutcome {
        defer { notifyChange() }
        let keys = try matching(request).map(\.primaryKey)
        return try state.withLock { state in
            try Self.checkOpen(state)
            let root = request.entity.rootEntity.name
            var changes: [StoreHistoryChange] = []
            for key in keys {
                guard var row = state.tables[root]?.rows[key] else { continue }
                for (slot, value) in values { row.snapshot.values[slot] = value }
                row.snapshot.version += 1
                state.tables[root]?.rows[key] = row
                changes.append(StoreHistoryChange(type: .update, entity: row.entity, primaryKey: key, changedSlots: values.map(\.slot)))
            }
            if tracksHistory { Self.record(&state, author: author, changes: changes) }
            return BatchOutcome(count: keys.count, keys: keys)
        }
    }

    package func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome {
        defer { notifyChange() }
        let keys = try matching(request).map(\.primaryKey)
        return try state.withLock { state in
            try Self.checkOpen(state)
            // Rules are applied to a copy: a deny leaves the store untouched.
            var rows = DeleteRows(state: state)
            try BatchDeleteRules.delete(keys, of: request.entity.rootEntity, in: &rows)
            if tracksHistory { Self.record(&rows.state, author: author, changes: rows.changes) }
            state = rows.state
            return BatchOutcome(count: keys.count, keys: keys)
        }
    }

    /// The rows of a batch delete with rules, in a copy of the store's state.
    private struct DeleteRows: BatchDeleteRows {
        var state: State
        var changes: [StoreHistoryChange] = []

        mutating func rows(_ keys: [Int64], of root: EntityDescription) -> [(entity: EntityDescription, keys: [Int64])] {
            var groups = KeysByEntity()
            for key in keys {
                guard let row = state.tables[root.name]?.rows[key] else { continue }
                groups.append(key, of: row.entity)
                changes.append(StoreHistoryChange(type: .delete, entity: row.entity, primaryKey: key, values: row.snapshot.values))
            }
            return groups.groups
        }

        func destinations(of relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) -> [Int64] {
            guard let table = state.tables[entity.rootEntity.name] else { return [] }
            if relationship.isToMany {
                return keys.flatMap { relatedKeys(relationship, of: $0, in: state) }
            }
            guard let slot = entity.toOneSlotByName[relationship.name] else { return [] }
            return keys.compactMap { key in
                guard case .object(let id) = table.rows[key]?.snapshot.values[slot] else { return nil }
                return id.primaryKey
            }
        }

        mutating func detach(_ relationship: RelationshipDescription, from keys: [Int64], of entity: EntityDescription) {
            guard let destination = relationship.destinationEntity else { return }
            let table = destination.rootEntity.name
            if let inverse = relationship.inverseRelationship, !inverse.isToMany {
                for key in destinations(of: relationship, from: keys, of: entity) { clear(inverse.name, of: key, in: table) }
            } else if relationship.isToMany {
                let deleted = Set(keys)
                state.joins[ObjectIdentifier(relationship)] = state.joins[ObjectIdentifier(relationship)]?.filter { !deleted.contains($0.source) }
                if let inverse = relationship.inverseRelationship {
                    state.joins[ObjectIdentifier(inverse)] = state.joins[ObjectIdentifier(inverse)]?.filter { !deleted.contains($0.destination) }
                }
            }
        }

        mutating func remove(_ keys: [Int64], of root: EntityDescription) {
            for key in keys { state.tables[root.name]?.rows[key] = nil }
        }

        /// Clears a to-one of a row (its destination is being deleted), bumping its version.
        private mutating func clear(_ relationship: String, of key: Int64, in table: String) {
            guard var row = state.tables[table]?.rows[key], let slot = row.entity.toOneSlotByName[relationship] else { return }
            row.snapshot.values[slot] = .null
            row.snapshot.version += 1
            state.tables[table]?.rows[key] = row
        }
    }

    // MARK: - History

    /// Records one history transaction of `changes` in `state`.
    static func record(_ state: inout State, author: HistoryAuthor, changes: [StoreHistoryChange]) {
        guard !changes.isEmpty else { return }
        state.lastTransaction += 1
        var records: [HistoryChangeRecord] = []
        for change in changes {
            state.lastChange += 1
            records.append(HistoryChangeRecord(changeID: state.lastChange, changeType: change.type.rawValue, entity: change.entity,
                                               primaryKey: change.primaryKey,
                                               updatedNames: change.updatedNames, tombstone: tombstone(change)))
        }
        state.history.append(HistoryTransactionRecord(number: state.lastTransaction, timestamp: Date(), author: author.author,
                                                      contextName: author.contextName,
                                                      processID: author.processID, bundleID: author.bundleID, changes: records))
    }

    /// A deletion's tombstone by attribute name (`nil` when the entity keeps none or the values
    /// are unknown).
    private static func tombstone(_ change: StoreHistoryChange) -> [String: ManagedValue]? {
        let attributes = change.entity.tombstoneAttributes
        guard change.type == .delete, change.values != nil, !attributes.isEmpty else { return nil }
        return Dictionary(uniqueKeysWithValues: zip(attributes.map(\.name), change.tombstoneValues))
    }

    package func importHistory(_ transactions: [HistoryTransactionRecord], lastNumber: Int64) throws {
        guard tracksHistory else { return }
        try state.withLock { state in
            try Self.checkOpen(state)
            state.history += transactions
            state.lastTransaction = max(state.lastTransaction, lastNumber)
            state.lastChange = max(state.lastChange, transactions.flatMap(\.changes).map(\.changeID).max() ?? 0)
        }
    }

    package func fetchHistory(after number: Int64?, date: Date?, limit: Int, includingChanges: Bool) throws -> [HistoryTransactionRecord] {
        try state.withLock { state in
            try Self.checkOpen(state)
            if let number { try CoreDataError.checkHistoryToken(number, oldest: state.history.first?.number, last: state.lastTransaction) }
            let after = state.history.lazy.filter { record in
                record.number > (number ?? 0) && date.map { record.timestamp > $0 } != false
            }
            return after.prefix(limit > 0 ? limit : .max).map { record in
                var copy = record
                if !includingChanges { copy.changes = [] }
                return copy
            }
        }
    }

    package func deleteHistory(through number: Int64?, before date: Date?) throws -> Int {
        try state.withLock { state in
            try Self.checkOpen(state)
            let before = state.history.count
            state.history.removeAll { record in
                if let date { return record.timestamp < date }
                return record.number <= (number ?? .max)
            }
            return before - state.history.count
        }
    }

    package func lastHistoryNumber() throws -> Int64? {
        guard tracksHistory else { return nil }
        return state.withLock { $0.lastTransaction }
    }

    package func watchChanges(_ handler: @escaping @Sendable () -> Void) {
        changeHandler.withLock { $0 = handler }
    }

    /// Tells the watcher (off the caller's thread, as a file watcher would).
    func notifyChange() {
        guard let handler = changeHandler.withLock({ $0 }) else { return }
        DispatchQueue.global().async { handler() }
    }

    package func close() {
        state.withLock { $0.closed = true; $0.tables = [:] }
    }

    private func matching(_ request: StoreFetchRequest) throws -> [StoreRow] {
        var graph: (any GraphResolver)?
        return try matching(request, graph: &graph)
    }

    /// The rows `request` selects, in key order, and (in `graph`) the stored graph they were
    /// read from, for reading their relationships' destinations.
    private func matching(_ request: StoreFetchRequest, graph resolver: inout (any GraphResolver)?) throws -> [StoreRow] {
        let snapshot = try state.withLock { state in
            try Self.checkOpen(state)
            return state
        }
        let rows = snapshot.tables[request.entity.rootEntity.name]?.rows.values.sorted { $0.primaryKey < $1.primaryKey } ?? []
        let graph = StoredGraph(state: snapshot, store: storeNumber)
        resolver = graph
        return rows.filter { row in
            let entityMatches = row.entity === request.entity || (request.includesSubentities && row.entity.isKindOf(entity: request.entity))
            guard entityMatches else { return false }
            guard let predicate = request.predicate else { return true }
            let id = ManagedObjectID.permanent(row.entity, storeNumber: storeNumber, primaryKey: row.primaryKey)
            return predicate.evaluate(EvaluationSubject(values: request.entity.adapt(row.snapshot.values, from: row.entity),
                                                        primaryKey: row.primaryKey, id: id, graph: graph))
        }
    }

    static func checkOpen(_ state: State) throws {
        if state.closed { throw CoreDataError(.persistentStoreOperation, "The in-memory store was removed from its coordinator; add a new store.") }
    }
}
