/// A sort key resolved against an entity.
package struct StoreSortKey: Sendable {
    package var slot: Int
    package var ascending: Bool
    package var comparator: SortComparator = .binary

    /// Whether `a` comes before `b` by these keys (ties: by primary key, as the SQL adds `Z_PK`).
    package static func precedes(_ a: [ManagedValue], _ aKey: Int64?, _ b: [ManagedValue], _ bKey: Int64?, by keys: [StoreSortKey]) -> Bool {
        for key in keys {
            let order = key.comparator.compare(a[key.slot], b[key.slot])
            if order == .orderedSame { continue }
            return key.ascending ? order == .orderedAscending : order == .orderedDescending
        }
        return (aKey ?? .max) < (bKey ?? .max)
    }
}

/// A fetch as a store sees it: entity, resolved predicate and order, window.
package struct StoreFetchRequest: Sendable {
    package var entity: EntityDescription
    package var predicate: BoundPredicate?
    package var sort: [StoreSortKey]
    package var limit: Int
    package var offset: Int
    package var includesSubentities: Bool

    package init(entity: EntityDescription, predicate: BoundPredicate? = nil, sort: [StoreSortKey] = [], limit: Int = 0, offset: Int = 0, includesSubentities: Bool = true) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.includesSubentities = includesSubentities
    }
}

/// Everything one context save writes, applied by a store in one transaction.
package struct StoreSaveRequest: Sendable {
    package struct Insert: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        package var values: [ManagedValue]
    }
    package struct Update: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        /// The version the context read; the row must still have it.
        package var expectedVersion: Int64
        /// The slots to write (all slots for `.overwrite`-style full writes).
        package var slots: [Int]
        package var values: [ManagedValue]
    }
    package struct Delete: Sendable {
        package var entity: EntityDescription
        package var primaryKey: Int64
        package var expectedVersion: Int64
    }

    /// A row added to or removed from a many-to-many relationship.
    package struct JoinChange: Sendable, Hashable {
        package var relationship: RelationshipDescription
        package var source: Int64
        package var destination: Int64
        package var isInsert: Bool

        package static func == (a: JoinChange, b: JoinChange) -> Bool {
            a.relationship === b.relationship && a.source == b.source && a.destination == b.destination && a.isInsert == b.isInsert
        }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(relationship))
            hasher.combine(source)
            hasher.combine(destination)
        }
    }

    /// The new order of the members of an ordered to-many relationship.
    package struct OrderChange: Sendable {
        package var relationship: RelationshipDescription
        package var source: Int64
        package var members: [Int64]
    }

    package var inserts: [Insert] = []
    package var updates: [Update] = []
    package var deletes: [Delete] = []
    /// Many-to-many changes, from one side of each pair.
    package var joins: [JoinChange] = []
    /// Ordered relationships whose order or membership changed.
    package var orders: [OrderChange] = []

    package init() {}
    package var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joins.isEmpty }
}

/// A row whose version changed (or that vanished) since a context read it.
package struct StoreConflict: Sendable {
    package var entity: EntityDescription
    package var primaryKey: Int64
    package var expectedVersion: Int64
    /// The row as it is in the store now; `nil` when it was deleted.
    package var current: RowSnapshot?

    package init(entity: EntityDescription, primaryKey: Int64, expectedVersion: Int64, current: RowSnapshot?) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.expectedVersion = expectedVersion
        self.current = current
    }
}

/// How many rows a batch operation touched, and which when asked.
package struct BatchOutcome: Sendable {
    package var count: Int
    package var keys: [Int64]?
    package init(count: Int, keys: [Int64]?) {
        self.count = count
        self.keys = keys
    }
}

/// What a store implementation provides to the coordinator. Implemented by the SQLite and the
/// in-memory stores. Every method may be called from any thread: the store owns its own
/// synchronisation (one writer at a time, concurrent readers).
package protocol StoreEngine: AnyObject, Sendable {
    /// The store's UUID (`Z_METADATA.Z_UUID` in SQLite).
    var identifier: String { get }
    /// Opens (creating when needed) the store for `model`; throws 134100 when the store was
    /// written with another model.
    func load(model: ManagedObjectModel) throws
    /// The store's metadata (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes`, …).
    func metadata() throws -> [String: any Sendable]
    func fetch(_ request: StoreFetchRequest) throws -> [StoreRow]
    /// The primary keys of the rows a request selects, in its order (no values read).
    func fetchKeys(_ request: StoreFetchRequest) throws -> [Int64]
    func count(_ request: StoreFetchRequest) throws -> Int
    func row(entity: EntityDescription, primaryKey: Int64) throws -> StoreRow?
    /// The destinations of a to-many relationship of the rows `primaryKeys` (one query), as
    /// (source key, destination) pairs in source then destination key order.
    func fetchRelated(_ relationship: RelationshipDescription, of primaryKeys: [Int64]) throws -> [(source: Int64, member: ManagedObjectID)]
    /// Reserves `count` consecutive primary keys for a root entity; returns the first.
    func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64
    /// Applies a save in one transaction. Returns the conflicts found, in which case nothing
    /// was written.
    func save(_ request: StoreSaveRequest) throws -> [StoreConflict]
    /// Batch insert in one transaction, allocating keys in bulk; rows colliding with the
    /// entity's first uniqueness constraint update the existing row (upsert). Returns the keys.
    func batchInsert(entity: EntityDescription, rows: [[ManagedValue]]) throws -> [Int64]
    /// Sets slots of every row the request selects (bumping `Z_OPT`); returns how many, and their
    /// keys when asked (reading them back costs time).
    func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool) throws -> BatchOutcome
    /// Deletes every row the request selects; returns how many, and their keys when asked.
    func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool) throws -> BatchOutcome
    /// Closes connections; the store is unusable afterwards.
    func close()
}
