import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// The PostgreSQL store: Core Data's tables (`Z<ENTITY>`, `Z_PRIMARYKEY`, `Z_METADATA`, join
/// tables) in a schema of a PostgreSQL database, shared by every coordinator that adds the same
/// URL, in any process on any machine. See `docs/PostgreSQL.md`.
///
/// Reads and saves borrow a session of the store's pool; a save is one `READ COMMITTED`
/// transaction whose row updates are conditional on `Z_OPT` (``StoreSaveRules``), and whose
/// `NOTIFY` reaches every store on the schema's channel once it commits.
package final class PostgreSQLStore: StoreEngine {
    let url: PostgreSQLStoreURL
    let pool: PostgreSQLSessionPool
    /// Sessions on the URL's `replicas` (hot standbys), for fetches and counts; `nil` without.
    let replicaPool: PostgreSQLSessionPool?
    /// The write-ahead log position of this store's last commit (see `noteCommit`): a replica
    /// serves reads only once it has replayed that far. Owned by this lock.
    let lastCommit = Locked<UInt64>(0)
    /// Until when reads leave the replicas alone, after one failed. Owned by this lock.
    private let replicasRestUntil = Locked<Date?>(nil)
    /// Whether saves and batch requests record persistent history (`NSPersistentHistoryTrackingKey`).
    package let tracksHistory: Bool

    struct Loaded: Sendable {
        var layout: RelationalLayout
        var metadata: [String: any Sendable]
        /// The digest (`md5`) of the `Z_METADATA` property list last found to name this store's
        /// model version, so that a write transaction's check reads no more than it (see
        /// `checkModelUnchanged`).
        var checkedDigest: String?
    }
    /// Opened, loaded (by `load`, its metadata replaced by `setMetadata`) or closed, and
    /// read-only or not (added read-only, or forced read-only by `load`: a store that records
    /// history added without `NSPersistentHistoryTrackingKey`, as Core Data does). Owned by its
    /// lock, never held across I/O.
    let lifecycle: Locked<StoreLifecycle<Loaded>>
    /// The store's UUID: a new one until `load` reads the schema's (or writes this one).
    private let uuid = StoreIdentity(UUID().uuidString)
    /// The remote-change subscription, once asked for. Owned by this lock.
    private let watcher = Locked<PostgreSQLChangeWatcher?>(nil)

    /// `NSStoreType` of these stores.
    static let typeName = PersistentStore.StoreType.postgreSQLName

    /// Whether `load` takes the schema's advisory lock (not when a migration that holds it opens
    /// the schema's old content; see ``PostgreSQLMigration``).
    private let locksSchemaOnLoad: Bool

    package convenience init(url: URL, options: [String: any Sendable]) throws {
        self.init(url: try PostgreSQLStoreURL(url), options: options)
    }

    init(url: PostgreSQLStoreURL, options: [String: any Sendable], locksSchemaOnLoad: Bool = true) {
        self.url = url
        pool = PostgreSQLSessionPool(url: url)
        replicaPool = url.replicas.isEmpty ? nil : PostgreSQLSessionPool(url: url, role: .replica)
        lifecycle = Locked(StoreLifecycle(readOnly: PersistentStore.isOn(NSReadOnlyPersistentStoreOption, in: options)))
        tracksHistory = PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options)
        self.locksSchemaOnLoad = locksSchemaOnLoad
    }

    package var isReadOnly: Bool { lifecycle.withLock { $0.isReadOnly } }

    /// How errors name this store.
    var description: String { "The PostgreSQL store \(url.description)" }

    /// The archived model a PostgreSQL store carries in its `Z_MODELCACHE` (every store this
    /// library creates), read without adding the store. Throws 134060 when the schema has none.
    package static func cachedModelArchive(at url: URL) throws -> Data {
        let storeURL = try PostgreSQLStoreURL(url)
        let session = try PostgreSQLSessionPool(url: storeURL).connect()
        defer { session.close() }
        guard try session.tableExists("z_modelcache", inSchema: storeURL.schema),
              case .data(let archive)? = try session.execute("SELECT Z_CONTENT FROM Z_MODELCACHE").rows.first?.first else {
            throw CoreDataError(.coreData, """
                The PostgreSQL store \(storeURL.description) carries no model (no Z_MODELCACHE row). Open it \
                with the app's model file.
                """)
        }
        return archive
    }

    package var identifier: String { uuid.identifier }
    package var storeNumber: UInt32 { uuid.number }

    // MARK: - Loading

    package func load(model: ManagedObjectModel) throws {
        let schema = url.schema
        let readOnly = isReadOnly
        let (loaded, forceReadOnly) = try pool.withSession { session in
            try session.transaction { () throws -> (Loaded, Bool) in
                // One creator (or migrator) per schema, whichever process comes first; the others
                // wait, then open.
                if locksSchemaOnLoad { try Self.lockSchema(session, url) }
                let loaded: Loaded
                if try session.tableExists("z_metadata", inSchema: schema) {
                    loaded = try openExisting(session, model: model)
                    if !readOnly { try ensureUniqueIndexes(session, layout: loaded.layout) }
                } else {
                    guard !readOnly else {
                        throw CoreDataError(.persistentStoreOpen, """
                            The PostgreSQL store \(url.description) has no tables yet, and it was added \
                            read-only.
                            """)
                    }
                    loaded = try create(session, model: model)
                }
                // History tables: a store that recorded history once.
                let forceReadOnly = try !readOnly && !tracksHistory && session.tableExists("atransaction", inSchema: schema)
                if tracksHistory && !readOnly { try ensureHistoryTables(session, model: model) }
                if !readOnly { try Self.ensureDerivedAttributeTriggers(session, schema: schema, layout: loaded.layout, model: model) }
                return (loaded, forceReadOnly)
            }
        }
        if let stored = loaded.metadata["NSStoreUUID"] as? String { uuid.set(stored) }
        // Core Data: a store that records history, added without NSPersistentHistoryTrackingKey,
        // is forced read-only (writes there would leave changes no history records).
        try lifecycle.withLock { try $0.load(loaded, forceReadOnly: forceReadOnly, store: description) }
    }

    /// Creates the schema's tables (inside `load`'s transaction).
    private func create(_ session: PostgreSQLSession, model: ManagedObjectModel) throws -> Loaded {
        var numbers: [String: Int] = [:]
        for entity in model.entities { numbers[entity.name] = entity.entityNumber }
        let layout = RelationalLayout(model: model, entityNumbers: numbers)
        let dialect = SQLDialect.postgreSQL
        try session.execute("CREATE SCHEMA IF NOT EXISTS \(quoted: url.schema)" as SQLFragment)
        for statement in dialect.createTables(layout) { try session.execute(statement) }
        for index in layout.indexes { try session.execute(dialect.createIndex(index)) }
        try session.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT bigint PRIMARY KEY, Z_NAME text, Z_SUPER bigint, Z_MAX bigint)")
        try session.execute("CREATE TABLE Z_METADATA (Z_VERSION bigint PRIMARY KEY, Z_UUID text, Z_PLIST bytea)")
        // The model, as a keyed archive (Core Data's cache deflates it; PostgreSQL compresses
        // large values itself), so that tools open the store without the app's model file.
        try session.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT bytea)")
        try session.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (\(bind: .data(CompiledModelWriter.archive(model))))" as SQLFragment)
        for entity in model.entities.sorted(by: { $0.entityNumber < $1.entityNumber }) {
            let row: [ManagedValue] = [.integer(Int64(entity.entityNumber)), .string(entity.name),
                                       .integer(Int64(entity.superentity?.entityNumber ?? 0))]
            try session.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (\(list: row), 0)" as SQLFragment)
        }
        let plist = try StoreMetadataPlist.make(model: model, storeType: Self.typeName)
        let metadata: [ManagedValue] = [.string(identifier), .data(plist)]
        try session.execute("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, \(list: metadata))" as SQLFragment)
        return Loaded(layout: layout, metadata: try Self.readMetadata(session))
    }

    /// Makes every uniqueness constraint's unique index the schema lacks (inside `load`'s
    /// transaction, under the schema's lock): schemas made before index names were kept distinct
    /// lost one of two constraints whose names met (`CREATE INDEX IF NOT EXISTS` skipped it with
    /// a notice), and a constraint without its index lets other writers store duplicates. A
    /// schema whose rows already break the constraint cannot get its index: the store does not
    /// open, and the error names the constraint.
    private func ensureUniqueIndexes(_ session: PostgreSQLSession, layout: RelationalLayout) throws {
        let dialect = SQLDialect.postgreSQL
        let unique = layout.indexes.filter(\.isUnique)
        guard !unique.isEmpty else { return }
        let query: SQLFragment = "SELECT indexname FROM pg_indexes WHERE schemaname = \(bind: .string(url.schema))"
        let existing = Set(try session.execute(query).rows.compactMap { row -> String? in
            if case .string(let name)? = row.first { name } else { nil }
        })
        for index in unique where !existing.contains(dialect.identifier(index.name)) {
            do {
                try session.execute(dialect.createIndex(index))
            } catch let error as CoreDataError where error.sqlState == "23505" {
                // `load`'s transaction rolls back: nothing of this open stays.
                throw CoreDataError(.persistentStoreOpen,
                                    """
                                        The PostgreSQL store \(url.description) lacks the unique index of the \
                                        uniqueness constraint on \(index.table) \
                                        (\(index.columns.map(\.name).joined(separator: ", "))), and its rows \
                                        already hold duplicates of those values, so the index cannot be made \
                                        (the schema was made by an earlier version, which skipped the index \
                                        when another one had the same name). Remove the duplicate rows, then \
                                        add the store again.
                                        """)
            }
        }
    }

    private func openExisting(_ session: PostgreSQLSession, model: ManagedObjectModel) throws -> Loaded {
        let metadata = try Self.readMetadata(session)
        let differences = StoreMetadataPlist.differences(metadata, model: model)
        guard differences.isEmpty else {
            throw CoreDataError(.persistentStoreIncompatibleVersionHash,
                                """
                                    The model used to open the PostgreSQL store \(url.description) is \
                                    incompatible with the one that created it: the entities \
                                    \(differences.joined(separator: ", ")) differ. Open it with the model that \
                                    wrote it, or let it migrate: turn on \
                                    NSMigratePersistentStoresAutomaticallyOption and \
                                    NSInferMappingModelAutomaticallyOption (a container's store descriptions \
                                    do by default).
                                    """)
        }
        var byName: [String: Int] = [:]
        for row in try session.execute("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY").rows {
            if case .integer(let number) = row[0], case .string(let name) = row[1] { byName[name] = Int(number) }
        }
        var numbers: [String: Int] = [:]
        var owners: [Int: String] = [:]
        for entity in model.entities {
            let number = byName[entity.name] ?? entity.entityNumber
            if let other = owners.updateValue(entity.name, forKey: number) {
                throw CoreDataError(.persistentStoreInvalidType, """
                    The PostgreSQL store \(url.description) gives the entities \(other) and \(entity.name) the \
                    same number (\(number)) in Z_PRIMARYKEY, so its rows cannot say which they are. Was the \
                    table changed by hand?
                    """)
            }
            numbers[entity.name] = number
        }
        return Loaded(layout: RelationalLayout(model: model, entityNumbers: numbers), metadata: metadata)
    }

    /// Takes the advisory lock that orders the creation and migration of `url`'s schema, until
    /// the session's transaction ends.
    static func lockSchema(_ session: PostgreSQLSession, _ url: PostgreSQLStoreURL) throws {
        try session.execute("SELECT FROM pg_advisory_xact_lock(hashtext(\(bind: .string("OpenCoreData schema " + url.schema))))" as SQLFragment)
    }

    static func readMetadata(_ session: PostgreSQLSession) throws -> [String: any Sendable] {
        guard let row = try session.execute("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1").rows.first else { return [:] }
        var plist: Data?, uuid: String?
        if case .data(let data) = row[1] { plist = data }
        if case .string(let text) = row[0] { uuid = text }
        return StoreMetadataPlist.read(plist, uuid: uuid, storeType: Self.typeName)
    }

    package func metadata() throws -> [String: any Sendable] {
        lifecycle.withLock { $0.loaded?.metadata } ?? [:]
    }

    /// The metadata of the store in the schema `url` names, without adding it (one connection,
    /// closed at once). Throws 134080 when the schema holds no store.
    package static func metadata(at url: URL) throws -> [String: any Sendable] {
        let storeURL = try PostgreSQLStoreURL(url)
        let session = try PostgreSQLSessionPool(url: storeURL).connect()
        defer { session.close() }
        guard try session.tableExists("z_metadata", inSchema: storeURL.schema) else {
            throw CoreDataError(.persistentStoreOpen, "There is no store in the PostgreSQL schema \(storeURL.schema) of \(storeURL.description).")
        }
        return try readMetadata(session)
    }

    package func setMetadata(_ metadata: [String: Any]) throws {
        if let uuid = metadata["NSStoreUUID"] as? String, uuid != identifier {
            throw CoreDataError(.persistentStoreOperation, "The UUID of a store added to a coordinator cannot change (its objects' IDs name it).")
        }
        try checkWritable()
        let written = try checkedTransaction { session in
            let data = try StoreMetadataPlist.replacingAppKeys(metadata, over: try Self.readMetadata(session))
            try session.execute("UPDATE Z_METADATA SET Z_PLIST = \(bind: .data(data)) WHERE Z_VERSION = 1" as SQLFragment)
            return try Self.readMetadata(session)
        }
        lifecycle.withLock { $0.update { $0.metadata = written } }
    }

    package func adoptIdentifier(_ identifier: String) throws {
        try checkWritable()
        let written = try checkedTransaction { session in
            try session.execute("UPDATE Z_METADATA SET Z_UUID = \(bind: .string(identifier)) WHERE Z_VERSION = 1" as SQLFragment)
            return try Self.readMetadata(session)
        }
        uuid.set(identifier)
        lifecycle.withLock { $0.update { $0.metadata = written } }
    }

    // MARK: - Access

    func currentLayout() throws -> RelationalLayout {
        try lifecycle.withLock { try $0.requireLoaded(description) }.layout
    }

    /// Runs a read on a pooled session or, inside a query generation (``QueryGenerationScope``),
    /// on the generation's snapshot of this store, taken by its first read. `inOneSnapshot`:
    /// every statement of `body` sees the same rows (a read-only transaction of its own).
    /// `onReplica`: a fetch or count, which a replica may serve (see `readOnReplica`).
    func read<T>(inOneSnapshot: Bool = false, onReplica: Bool = false, _ body: (PostgreSQLSession) throws -> T) throws -> T {
        // Inside this store's batch transaction: its session, which sees the rows it locked and
        // what it wrote (and is the one session the caller holds).
        if let transaction = TransactionSession.current, transaction.store == ObjectIdentifier(self) {
            return try body(transaction.session)
        }
        if let generation = QueryGeneration.current,
           let snapshot = try generation.snapshot(for: "postgreSQL " + url.description, open: { try PostgreSQLReadSnapshot.open(pool) }) {
            return try snapshot.read(body)
        }
        /// `body` on a pooled session.
        func run(_ session: PostgreSQLSession) throws -> T {
            guard inOneSnapshot else { return try body(session) }
            // Several statements that must see the same rows (a superset read chunk by chunk).
            return try session.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(session) }
        }
        if onReplica, let replicaPool, let result = readOnReplica(replicaPool, run) { return result }
        return try pool.withSession(run)
    }

    /// How long a read waits for a replica to replay this store's last commit before the
    /// primary serves it.
    static let replicaWait = 0.2

    /// How long reads leave the replicas alone after one failed.
    static let replicaRest = 5.0

    /// `body` on a replica that has replayed this store's last commit (read-your-writes), or
    /// `nil` — the primary then serves the read — when no replica session is free, when none has
    /// replayed it within ``replicaWait``, or the replica fails (unreachable, or a query cancelled
    /// by its replay: then the replicas rest for ``replicaRest`` seconds, so that reads do not
    /// wait on a dead one each time).
    private func readOnReplica<T>(_ replicas: PostgreSQLSessionPool, _ body: (PostgreSQLSession) throws -> T) -> T? {
        let needed = lastCommit.withLock { $0 }
        guard needed != .max, replicasRestUntil.withLock({ $0 }).map({ $0 <= Date() }) ?? true else { return nil }
        do {
            // A replica whose sessions are all busy is not waited for: the primary serves.
            return try replicas.withFreeSession { session -> T? in
                if session.knownWALPosition.withLock({ $0 }) < needed {
                    let deadline = Date(timeIntervalSinceNow: Self.replicaWait)
                    while true {
                        let position = try session.walPosition()
                        session.knownWALPosition.withLock { $0 = max($0, position) }
                        if position >= needed { break }
                        guard Date() < deadline else { return nil }
                        Thread.sleep(forTimeInterval: 0.002)
                    }
                }
                return try body(session)
            } ?? nil
        } catch {
            replicasRestUntil.withLock { $0 = Date(timeIntervalSinceNow: Self.replicaRest) }
            return nil
        }
    }

    /// After a commit on `session` (a primary's): with replicas, remembers how far the log
    /// reached, so that later reads wait for a replica to replay it. A position that cannot be
    /// read leaves reads to the primary until the next commit says.
    func noteCommit(_ session: PostgreSQLSession) {
        guard replicaPool != nil else { return }
        guard let position = try? session.walPosition() else { return lastCommit.withLock { $0 = .max } }
        lastCommit.withLock { $0 = $0 == .max ? position : max($0, position) }
    }

    func checkWritable() throws {
        if isReadOnly {
            throw CoreDataError(.persistentStoreOperation, """
                The PostgreSQL store \(url.description) was added read-only (NSReadOnlyPersistentStoreOption); \
                nothing was written.
                """)
        }
    }

    /// The notification channel of the store's schema (an identifier: `ocd_` and the schema's
    /// hash, so that any schema name fits PostgreSQL's 63 bytes).
    var channel: String { "ocd_" + url.digest }

    package func watchChanges(_ handler: @escaping @Sendable () -> Void) {
        // A dedicated session (a listening connection must stay open, outside the pool's turns),
        // connected again whenever it is lost.
        let pool = pool
        let subscription = PostgreSQLChangeWatcher(channel: channel, connect: { try pool.connect() }, handler: handler)
        replaceWatcher(with: subscription)
        subscription.start()
    }

    package func close() {
        lifecycle.withLock { $0.close() }
        replaceWatcher(with: nil)
        pool.close()
        replicaPool?.close()
    }

    /// Puts `new` in the old subscription's place in one step, then stops the old one outside the
    /// lock (two callers at once each stop the one they replaced; none is left running).
    private func replaceWatcher(with new: PostgreSQLChangeWatcher?) {
        watcher.withLock { current in
            defer { current = new }
            return current
        }?.stop()
    }

}
