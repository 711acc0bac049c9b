import Foundation

/// What a store implementation provides to the coordinator — the SQLite, in-memory and PostgreSQL
/// stores, and any registered type — as four concerns: its life and metadata
/// (``StoreAdministration``), reading rows (``StoreReading``), writing them (``StoreWriting``) and
/// persistent history (``StoreHistoryKeeping``). Every method may be called from any thread: the
/// store owns its own synchronisation (one writer at a time, concurrent readers).
package protocol StoreEngine: StoreAdministration, StoreReading, StoreWriting, StoreHistoryKeeping {}

/// A store's life (load, close, watching for commits) and what identifies it.
package protocol StoreAdministration: AnyObject, Sendable {
    /// The store's UUID (`Z_METADATA.Z_UUID` in SQLite).
    var identifier: String { get }
    /// The number of `identifier` (`StoreNumbers`): what object IDs of this store hold.
    var storeNumber: UInt32 { get }
    /// Whether the store refuses every write (known once loaded).
    var isReadOnly: Bool { get }
    /// Opens (creating when needed) the store for `model`; throws 134100 when the store was
    /// written with another model.
    func load(model: ManagedObjectModel) throws
    /// The store's metadata (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes`, …).
    func metadata() throws -> [String: any Sendable]
    /// Replaces the app's keys of the metadata (property-list values), keeping the store's own.
    func setMetadata(_ metadata: [String: Any]) throws
    /// Gives a loaded store that holds no objects yet the UUID of the store it becomes a copy of
    /// (`migratePersistentStore` keeps it, so that object IDs and their URIs stay valid).
    func adoptIdentifier(_ identifier: String) throws
    /// Calls `handler` (on some background thread) after every change committed to the store,
    /// by this process or another one.
    func watchChanges(_ handler: @escaping @Sendable () -> Void)
    /// Closes connections; the store is unusable afterwards.
    func close()
}

/// Reading a store's rows: fetches, keys, counts, dictionary results, to-many destinations.
package protocol StoreReading: AnyObject, Sendable {
    func fetch(_ request: StoreFetchRequest) throws -> [StoreRow]
    /// The primary keys of the rows a request selects, in its order (no values read).
    func fetchKeys(_ request: StoreFetchRequest) throws -> [Int64]
    func count(_ request: StoreFetchRequest) throws -> Int
    /// The results of a dictionary fetch, one array of values per result row (in the order of
    /// `request.columns`). Stores without a query language of their own run
    /// `request.evaluate` over their rows (the default).
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[ManagedValue]]
    func row(entity: EntityDescription, primaryKey: Int64) throws -> StoreRow?
    /// The destinations of a to-many relationship of the rows `primaryKeys` (one query), as
    /// (source key, destination) pairs in source then destination key order.
    func fetchRelated(_ relationship: RelationshipDescription, of primaryKeys: [Int64]) throws -> [(source: Int64, member: ManagedObjectID)]
}

/// Writing a store: saves, key allocation, batch requests.
package protocol StoreWriting: AnyObject, Sendable {
    /// Reserves `count` consecutive primary keys for a root entity; returns the first.
    func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64
    /// The last key given for a root entity (`Z_PRIMARYKEY.Z_MAX`; 0 before the first): keys of
    /// deleted objects stay given, so that an object ID never names two objects.
    func lastPrimaryKey(root: EntityDescription) throws -> Int64
    /// Applies a save in one transaction. Returns the conflicts found, in which case nothing
    /// was written. With `beforeCommit`, it is called once everything is written and checked,
    /// just before the commit (still holding the store's writer): when it returns `false` or
    /// throws, the transaction is rolled back and nothing is written (a save split across stores
    /// commits each store's part only once every other part is ready). With `resolve`, conflicts
    /// go to it with their rows held, and the save it makes again is written instead
    /// (``StoreSaveRules/save(_:resolving:recordingHistory:beforeCommit:transact:)``).
    func save(_ request: StoreSaveRequest, resolving resolve: StoreConflictResolver?, beforeCommit: (() throws -> Bool)?) throws -> StoreSaveOutcome
    /// Batch insert in one transaction, allocating keys in bulk; rows colliding with the
    /// entity's first uniqueness constraint update the existing row (upsert). Returns the keys.
    func batchInsert(entity: EntityDescription, rows: StoredRows, author: HistoryAuthor) throws -> [Int64]
    /// Sets slots of every row the request selects (bumping `Z_OPT`); returns how many, and their
    /// keys when asked (reading them back costs time).
    func batchUpdate(_ request: StoreFetchRequest, values: [(slot: Int, value: ManagedValue)], returningKeys: Bool,
                     author: HistoryAuthor) throws -> BatchOutcome
    /// Deletes every row the request selects; returns how many, and their keys when asked.
    func batchDelete(_ request: StoreFetchRequest, returningKeys: Bool, author: HistoryAuthor) throws -> BatchOutcome

}

/// Persistent history (stores opened with history tracking; others return nothing).
package protocol StoreHistoryKeeping: AnyObject, Sendable {
    /// Whether the store records persistent history.
    var tracksHistory: Bool { get }
    /// The transactions after `number` and committed after `date` (either may be absent), oldest
    /// first, at most `limit` of them (0: all; a reader pages through a long history with the
    /// last number it read). Throws 134301 when history after `number` was deleted.
    func fetchHistory(after number: Int64?, date: Date?, limit: Int, includingChanges: Bool) throws -> [HistoryTransactionRecord]
    /// Deletes the transactions up to `number` (or committed before `date`); returns how many.
    func deleteHistory(through number: Int64?, before date: Date?) throws -> Int
    /// The number of the last transaction recorded, or `nil` without history.
    func lastHistoryNumber() throws -> Int64?
    /// Writes persistent history of the store this one is a copy of into this one, which records
    /// history: each transaction under its own number, timestamp and author, after those written
    /// by earlier calls (a copy writes a page at a time, in order); new transactions are numbered
    /// after `lastNumber` (at least the last transaction's number), so that history tokens of the
    /// source keep their meaning here. A store that records no history ignores it.
    func importHistory(_ transactions: [HistoryTransactionRecord], lastNumber: Int64) throws
}
