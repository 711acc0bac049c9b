import CSQLite
import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// The SQLite store, in Core Data's file layout (see `docs/StorageLayout.md`).
///
/// One writer connection (behind a lock: saves and key allocation are serialised) and a pool of
/// read-only connections in WAL mode, so fetches never wait for a save. Statements are cached
/// per connection, keyed by their SQL (one per fetch shape).
package final class SQLiteStore: StoreEngine {
    package let url: URL
    /// The store's UUID: the one in the file, or a new one that `load` writes when it creates
    /// the store, unless another process created it first (then its UUID is adopted).
    private let uuid: StoreIdentity
    private let options: SQLiteStoreOptions
    /// Whether saves and batch requests record persistent history (`NSPersistentHistoryTrackingKey`).
    package let tracksHistory: Bool
    /// Polls `PRAGMA data_version` for remote-change notifications, once asked to.
    private let watcher = Locked<SQLiteChangeWatcher?>(nil)
    /// The connection that writes, behind the store's write lock (one save or key allocation at
    /// a time); `nil` once closed.
    private let writer: Locked<SQLiteConnection?>
    let readers: SQLiteReaderPool
    struct Loaded: Sendable {
        var layout: RelationalLayout
        var entityNumbers: [String: Int]
        var metadata: [String: any Sendable]
        /// The schema version and model hashes writes are checked against (`checkModelUnchanged`).
        var schema: (version: Int64, hashes: [String: Data])?
    }
    /// Opened, loaded or closed, and read-only or not; owned by its lock, which is never held
    /// across I/O (the writer's lock is the one saves hold).
    let lifecycle: Locked<StoreLifecycle<Loaded>>

    /// Opens (creating when missing) the SQLite file at `url`, with the connection settings of
    /// `options` (pragmas and busy timeout).
    package init(url: URL, readOnly: Bool = false, tracksHistory: Bool = false, options: SQLiteStoreOptions = SQLiteStoreOptions()) throws {
        self.url = url
        self.lifecycle = Locked(StoreLifecycle(readOnly: readOnly))
        self.tracksHistory = tracksHistory
        self.options = options
        if !readOnly {
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let connection = try SQLiteConnection(path: url.path, readOnly: readOnly, busyTimeout: options.busyTimeoutMilliseconds)
        var existingUUID: String?
        do {
            if try connection.tableExists("Z_METADATA") {
                let statement = try connection.cachedStatement("SELECT Z_UUID FROM Z_METADATA WHERE Z_VERSION = 1")
                defer { statement.reset() }
                if try statement.step(), !statement.isNull(at: 0) { existingUUID = statement.string(at: 0) }
            }
        } catch let error as CoreDataError where error.code == .persistentStoreInvalidType {
            throw CoreDataError(.persistentStoreInvalidType, """
                The file at \(url.path) is not an SQLite store. Point the store description at a Core Data \
                SQLite file or a new path.
                """, storeDetail: error.storeDetail)
        }
        uuid = StoreIdentity(existingUUID ?? UUID().uuidString)
        writer = Locked(connection)
        readers = SQLiteReaderPool(path: url.path, size: 4, options: options)
    }

    /// The store's UUID (`Z_METADATA.Z_UUID`).
    package var identifier: String { uuid.identifier }
    package var storeNumber: UInt32 { uuid.number }

    package func adoptIdentifier(_ identifier: String) throws {
        try withWriter { db in
            try db.transaction {
                let statement = try db.prepare("UPDATE Z_METADATA SET Z_UUID = ? WHERE Z_VERSION = 1")
                defer { statement.finalize() }
                try statement.bind([.string(identifier)])
                try statement.run()
            }
            uuid.set(identifier)
            updateLoadedMetadata(try Self.readMetadata(db))
        }
    }

    /// Whether the store refuses writes: opened with `NSReadOnlyPersistentStoreOption`, or a
    /// store that records persistent history opened without `NSPersistentHistoryTrackingKey`
    /// (as Core Data does: writes there would leave changes no history records).
    package var isReadOnly: Bool { lifecycle.withLock { $0.isReadOnly } }

    // MARK: - Loading

    package func load(model: ManagedObjectModel) throws {
        let readOnly = isReadOnly
        // A read-only connection to put in the writer's place (see below), once its lock is free.
        let readOnlyWriter = try withWriter { db -> SQLiteConnection? in
            if !readOnly {
                // Before WAL: auto_vacuum only takes effect in a file that has no page yet.
                if try db.integerPragma("page_count") == 0 { try db.execute("PRAGMA auto_vacuum = 2") }
                try db.enableWAL(waitingUpTo: options.busyTimeoutMilliseconds)
                try db.execute("PRAGMA synchronous = NORMAL")
                // After a large import the WAL file would keep its size for good: SQLite truncates
                // it to this when it starts over after a checkpoint.
                try db.execute("PRAGMA journal_size_limit = \(SQLiteStoreOptions.defaultJournalSizeLimit)")
            }
            try options.apply(to: db, readOnly: readOnly)
            var loaded: Loaded
            if try db.tableExists("Z_METADATA") {
                loaded = try openExisting(db, model: model)
            } else {
                guard !readOnly else {
                    throw CoreDataError(.persistentStoreOpen, "The store at \(url.path) does not exist or is empty, and it was opened read-only.")
                }
                loaded = try createUnlessCreated(db, model: model)
            }
            let forceReadOnly = try !readOnly && !tracksHistory && db.hasHistoryTables()
            if tracksHistory && !readOnly { try ensureHistoryTables(db, model: model) }
            loaded.schema = (try db.integerPragma("schema_version"), model.entityVersionHashesByName)
            if let stored = loaded.metadata["NSStoreUUID"] as? String { uuid.set(stored) }
            // Core Data: "Store opened without NSPersistentHistoryTrackingKey but previously had
            // been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode".
            // The writer becomes a read-only connection, so no write can reach the file.
            let connection = forceReadOnly ? try options.readOnlyConnection(to: url.path) : nil
            try lifecycle.withLock { try $0.load(loaded, forceReadOnly: forceReadOnly, store: description) }
            return connection
        }
        if let readOnlyWriter { writer.withLock { $0 = readOnlyWriter } }
    }

    /// Creates the store's tables, unless another connection or process created them since
    /// this one looked: the check and the creation share one write transaction, so two
    /// processes creating the same new store end with one store and one UUID.
    private func createUnlessCreated(_ db: SQLiteConnection, model: ManagedObjectModel) throws -> Loaded {
        try db.transaction {
            try db.tableExists("Z_METADATA") ? try openExisting(db, model: model) : try create(db, model: model)
        }
    }

    /// Inside `createUnlessCreated`'s transaction.
    private func create(_ db: SQLiteConnection, model: ManagedObjectModel) throws -> Loaded {
        var numbers: [String: Int] = [:]
        for entity in model.entities { numbers[entity.name] = entity.entityNumber }
        let layout = RelationalLayout(model: model, entityNumbers: numbers)
        let plist = try Self.metadataPlist(model: model)
        for statement in SQLDialect.sqlite.createTables(layout) + layout.indexes.map(SQLDialect.sqlite.createIndex) {
            let prepared = try db.prepare(statement)
            defer { prepared.finalize() }
            try prepared.run()
        }
        for sql in layout.derivedAttributeTriggers(model: model).flatMap(\.sqliteStatements) { try db.execute(sql) }
        try db.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try db.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        try db.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        try SQLiteModelCache.write(model, in: db)
        let insertKey = try db.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
        defer { insertKey.finalize() }
        for entity in model.entities.sorted(by: { $0.entityNumber < $1.entityNumber }) {
            try insertKey.bind([.integer(Int64(entity.entityNumber)), .string(entity.name), .integer(Int64(entity.superentity?.entityNumber ?? 0))])
            try insertKey.run()
        }
        let insertMetadata = try db.prepare("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
        defer { insertMetadata.finalize() }
        try insertMetadata.bind([.string(identifier), .data(plist)])
        try insertMetadata.run()
        return Loaded(layout: layout, entityNumbers: numbers, metadata: try Self.readMetadata(db))
    }

    private func openExisting(_ db: SQLiteConnection, model: ManagedObjectModel) throws -> Loaded {
        let metadata = try Self.readMetadata(db)
        let details = StoreMetadataPlist.differences(metadata, model: model)
        if !details.isEmpty {
            throw CoreDataError(.persistentStoreIncompatibleVersionHash,
                                """
                                    The model used to open the store is incompatible with the one used to \
                                    create the store: the entities \(details.joined(separator: ", ")) differ. \
                                    Open it with the model that wrote it, or let it migrate: turn on \
                                    NSMigratePersistentStoresAutomaticallyOption and \
                                    NSInferMappingModelAutomaticallyOption (a container's store descriptions \
                                    do by default).
                                    """)
        }
        let numbers = try Self.storedEntityNumbers(db, model: model)
        let layout = RelationalLayout(model: model, entityNumbers: numbers)
        try Self.checkPrimaryKeys(db, layout: layout)
        return Loaded(layout: layout, entityNumbers: numbers, metadata: metadata)
    }

    /// Every entity table must key its rows by `Z_PK INTEGER PRIMARY KEY` (SQLite's row id), as
    /// Core Data creates it. In a damaged or crafted file whose `Z_PK` is a plain column, rows could
    /// have no key or share one, and several rows would be read as one object (whose entity and
    /// values then disagree with what was asked for): such a file is refused when it is opened.
    /// The history tables are checked alike: two transactions of one number are no history.
    static func checkPrimaryKeys(_ db: SQLiteConnection, layout: RelationalLayout) throws {
        let statement = try db.prepare("SELECT name, type FROM pragma_table_info(?) WHERE pk > 0")
        defer { statement.finalize() }
        for name in layout.tables.map(\.name) + HistoryTables.tableNames where try db.tableExists(name) {
            statement.reset()
            try statement.bind([.string(name)])
            var keys: [(name: String, type: String)] = []
            while try statement.step() { keys.append((statement.string(at: 0), statement.string(at: 1))) }
            guard keys.count == 1, keys[0].name == "Z_PK", keys[0].type.uppercased() == "INTEGER" else {
                throw CoreDataError(.persistentStoreInvalidType,
                                    """
                                        The table \(name) of the store at \(db.path) does not key its rows by \
                                        Z_PK INTEGER PRIMARY KEY (its key: \
                                        \(keys.isEmpty ? "none" : keys.map { "\($0.name) \($0.type)" }.joined(separator: ", "))): \
                                        the file is damaged or was not written by Core Data. Restore it from a \
                                        backup.
                                        """)
            }
        }
    }

    /// The `Z_ENT` of each entity as the store's `Z_PRIMARYKEY` lists it, matched by name or by
    /// renaming identifier (a migrated store keeps an entity's old name there, CoreDataFormat.md §8).
    static func storedEntityNumbers(_ db: SQLiteConnection, model: ManagedObjectModel) throws -> [String: Int] {
        let statement = try db.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
        defer { statement.finalize() }
        var byName: [String: Int] = [:]
        while try statement.step() { byName[statement.string(at: 1)] = Int(statement.int64(at: 0)) }
        var numbers: [String: Int] = [:]
        var owners: [Int: String] = [:]
        for entity in model.entities {
            let number = byName[entity.name] ?? entity.renamingIdentifier.flatMap { byName[$0] } ?? entity.entityNumber
            // Rows name their entity by number: two entities under one number would make a fetch
            // of one return objects of the other (found by the fuzzer).
            if let other = owners.updateValue(entity.name, forKey: number) {
                throw CoreDataError(.persistentStoreInvalidType, """
                    The store at \(db.path) gives the entities \(other) and \(entity.name) the same number \
                    (\(number)) in Z_PRIMARYKEY, so its rows cannot say which they are: the file is damaged. \
                    Restore it from a backup.
                    """)
            }
            numbers[entity.name] = number
        }
        return numbers
    }

    /// The binary property list Core Data keeps in `Z_METADATA.Z_PLIST`.
    static func metadataPlist(model: ManagedObjectModel) throws -> Data {
        try StoreMetadataPlist.make(model: model, storeType: "SQLite")
    }

    /// Reads `Z_METADATA`: the plist's keys plus `NSStoreUUID` from `Z_UUID`, as Core Data returns them.
    static func readMetadata(_ db: SQLiteConnection) throws -> [String: any Sendable] {
        let statement = try db.cachedStatement("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
        defer { statement.reset() }
        guard try statement.step() else { return [:] }
        return StoreMetadataPlist.read(statement.isNull(at: 1) ? nil : statement.data(at: 1),
                                       uuid: statement.isNull(at: 0) ? nil : statement.string(at: 0), storeType: "SQLite")
    }

    /// Reads the metadata of a store file without adding it to a coordinator.
    package static func metadata(at url: URL) throws -> [String: any Sendable] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError(.persistentStoreOpen, "There is no store at \(url.path).")
        }
        let db = try SQLiteConnection(path: url.path, readOnly: true)
        guard try db.tableExists("Z_METADATA") else {
            throw CoreDataError(.persistentStoreInvalidType, "The file at \(url.path) is not a Core Data SQLite store (it has no Z_METADATA table).")
        }
        return try readMetadata(db)
    }

    package func metadata() throws -> [String: any Sendable] {
        lifecycle.withLock { $0.loaded?.metadata } ?? [:]
    }

    func updateLoadedMetadata(_ metadata: [String: any Sendable]) {
        lifecycle.withLock { $0.update { $0.metadata = metadata } }
    }

    /// How errors name this store.
    var description: String { "The SQLite store at \(url.path)" }

    // MARK: - Access

    func currentLayout() throws -> RelationalLayout {
        try lifecycle.withLock { try $0.requireLoaded(description) }.layout
    }

    func withWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { connection in
            guard let connection else {
                throw CoreDataError(.persistentStoreOperation,
                                    "\(description) was closed (removed from its coordinator); add it to a coordinator again.")
            }
            return try body(connection)
        }
    }

    package func watchChanges(_ handler: @escaping @Sendable () -> Void) {
        watcher.withLock { current in
            current?.stop()
            current = try? SQLiteChangeWatcher(path: url.path, handler: handler)
        }
    }

    package func close() {
        watcher.withLock { $0?.stop(); $0 = nil }
        lifecycle.withLock { $0.close() }
        writer.withLock { $0 = nil }
        readers.close()
    }
}
