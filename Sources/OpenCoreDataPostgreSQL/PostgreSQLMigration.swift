import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Lightweight migration of a PostgreSQL schema: when the schema was written with another
/// version of the model, its objects are migrated as an SQLite store's are — the same inferred
/// mapping (renaming identifiers, mapping models, type conversions, defaults), keys kept where a
/// table keeps its rows, the store's UUID, key counters and persistent history — and the schema's
/// tables are replaced by the migrated ones in one PostgreSQL transaction.
///
/// How, in one transaction on a connection of its own, whose end is the only moment other
/// connections can see anything change:
/// 1. the schema's advisory lock (the one a first `load` creates the tables under: other
///    coordinators adding the store wait, then find it migrated), and an `EXCLUSIVE` lock on
///    `Z_METADATA`, which every write transaction's first statement conflicts with (see
///    `PostgreSQLStore+ModelGuard.swift`): saves in flight finish first and are migrated, later
///    ones wait and are then refused (134100) — none is lost. Readers go on reading the old
///    tables meanwhile;
/// 2. a scratch schema (`ocd_migrating_…`) gets the new model's empty tables, and the same
///    session copies the old rows into them (``RelationalMigrator``, the one implementation of
///    Core Data's rules that the SQLite store's migration runs too): by `INSERT … SELECT` inside
///    the server where a table's rows are a straight copy, else a page of old rows at a time,
///    written back in multi-row inserts. Nothing leaves the server but what the row-by-row copy
///    reads, and nothing is written on the client's disk;
/// 3. the old tables are dropped and the scratch schema's moved in their place (PostgreSQL's DDL
///    is transactional), then the transaction commits and the change is notified.
/// A failure at any point — or a crash — leaves the schema exactly as it was (a scratch schema
/// left by a crash is dropped by the next migration).
package enum PostgreSQLMigration {
    /// How long the migration waits for a table lock (writers in flight, readers of the old
    /// tables) before it gives up, changing nothing.
    static let lockTimeout = "60s"

    /// Migrates the store at `url` to `model` when its schema was written with another model.
    /// Returns whether it migrated (`false` as well when another coordinator or process migrated
    /// it first). The store's model is its `Z_MODELCACHE`, one of `MigrationSourceModelsOption`
    /// with its version hashes, or the source of a mapping model under `MappingModelsOption`.
    @discardableResult
    package static func migrateIfNeeded(at url: URL, to model: ManagedObjectModel, options: [String: any Sendable]) throws -> Bool {
        let storeURL = try PostgreSQLStoreURL(url)
        try model.freeze()
        let session = try PostgreSQLSessionPool(url: storeURL).connect()
        defer { session.close() }
        // Without a lock first: a store at the current version costs two reads.
        guard try storedHashes(session, storeURL, differingFrom: model) != nil else { return false }

        // A scratch schema of this attempt's own: one that a killed migration left is dropped
        // first (below), never inside the migration's transaction, whose uncommitted DROP would
        // hold the old tables' locks against the scratch store's own connections until the
        // statement timeout (`Reliability/run --postgres`, kill -9 during a migration).
        var scratch = storeURL
        scratch.schema = scratchPrefix(of: storeURL) + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        defer { _ = try? session.execute("DROP SCHEMA IF EXISTS \(quoted: scratch.schema) CASCADE" as SQLFragment) }
        do {
            try dropLeftScratchSchemas(session, of: storeURL)
            return try session.transaction {
                try PostgreSQLStore.lockSchema(session, storeURL)
                guard let hashes = try storedHashes(session, storeURL, differingFrom: model) else { return false }
                let cached = try cachedModel(session)
                let (source, mappingModel) = try MigrationSourceModel.find(for: "The PostgreSQL store \(storeURL.description)", hashes: hashes, cached: cached,
                                                                           destination: model, options: options)
                try session.execute("SELECT set_config('lock_timeout', \(bind: .string(lockTimeout)), true)" as SQLFragment)
                try session.execute("LOCK TABLE Z_METADATA IN EXCLUSIVE MODE")
                let hasHistory = try session.tableExists("atransaction", inSchema: storeURL.schema)
                let tracksHistory = hasHistory || PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options)

                // The old tables' layout, with the entity numbers the schema keeps (the lock
                // above is held by this session, so the reading store must not ask for it).
                let old = PostgreSQLStore(url: storeURL, options: [NSReadOnlyPersistentStoreOption: true, NSPersistentHistoryTrackingKey: hasHistory],
                                          locksSchemaOnLoad: false)
                defer { old.close() }
                try old.load(model: source)
                let oldLayout = try old.currentLayout()
                old.close()
                // The new tables, empty, in the scratch schema (made and committed by a store of
                // their own, as a first `load` makes a schema).
                let new = PostgreSQLStore(url: scratch, options: [NSPersistentHistoryTrackingKey: tracksHistory])
                defer { new.close() }
                try new.load(model: model)
                let newLayout = try new.currentLayout()
                new.close()

                let mapping = try InferredMapping(source: source, destination: model, mappingModel: mappingModel)
                let sessions = PostgreSQLMigrationSessions(session: session, store: storeURL.schema, scratch: scratch.schema)
                let progress = options[MigrationProgressHandlerOption] as? @Sendable (MigrationProgress) -> Void
                try RelationalMigrator(sessions: sessions, mapping: mapping, storeName: "the PostgreSQL store \(storeURL.description)",
                                       sourceLayout: oldLayout, targetLayout: newLayout, progress: progress).copy(hasHistory: hasHistory)

                try replaceTables(session, of: storeURL, layout: oldLayout, with: scratch)
                // The moved tables' triggers run the scratch schema's functions: made again here.
                try PostgreSQLStore.ensureDerivedAttributeTriggers(session, schema: storeURL.schema, layout: newLayout, model: model, replacing: true)
                try session.execute("DROP SCHEMA \(quoted: scratch.schema) CASCADE" as SQLFragment)
                try session.notify(old.channel, payload: old.identifier)
                return true
            }
        } catch let error as CoreDataError where [.migration, .migrationMissingSourceModel, .migrationMissingMappingModel].contains(error.code) {
            throw error
        } catch let error as CoreDataError {
            var failure = CoreDataError(.migration, """
                The PostgreSQL store \(storeURL.description) could not be migrated, and is unchanged: \
                \(error.message)
                """
                                        + (error.sqlState == "55P03" ? """
                                             (another connection held a table of the store for \(lockTimeout): \
                                            a long transaction, or a context pinned to a query generation; try \
                                            again once it ends)
                                            """ : ""))
            failure.sqlState = error.sqlState
            failure.underlyingErrors = [error]
            throw failure
        } catch {
            throw CoreDataError(.migration, "The PostgreSQL store \(storeURL.description) could not be migrated, and is unchanged: \(error)")
        }
    }

    /// The start of the names of the store's scratch schemas (`ocd_migrating_<digest>_<attempt>`;
    /// earlier versions named theirs `ocd_migrating_<digest>`).
    package static func scratchPrefix(of url: PostgreSQLStoreURL) -> String {
        "ocd_migrating_" + url.digest
    }

    /// Drops the scratch schemas that migrations of the store killed on the way left, in a
    /// transaction of its own under the schema's lock: no migration of the store is running
    /// then (each holds the lock until it ends), so every scratch schema found is a leftover.
    private static func dropLeftScratchSchemas(_ session: PostgreSQLSession, of url: PostgreSQLStoreURL) throws {
        try session.transaction {
            try PostgreSQLStore.lockSchema(session, url)
            let prefix = ManagedValue.string(scratchPrefix(of: url))
            let rows = try session.execute("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, \(bind: prefix))" as SQLFragment).rows
            for case .string(let name) in rows.compactMap(\.first) where PostgreSQLStoreURL.isIdentifier(name) {
                try session.execute("DROP SCHEMA \(quoted: name) CASCADE" as SQLFragment)
            }
        }
    }

    /// The version hashes of the schema's model when they differ from `model`'s; `nil` when
    /// they are the same or the schema has no store yet.
    private static func storedHashes(_ session: PostgreSQLSession, _ url: PostgreSQLStoreURL,
                                     differingFrom model: ManagedObjectModel) throws -> [String: Data]? {
        guard try session.tableExists("z_metadata", inSchema: url.schema) else { return nil }
        let hashes = try PostgreSQLStore.readMetadata(session)["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        return hashes == model.entityVersionHashesByName ? nil : hashes
    }

    /// The model the schema carries in `Z_MODELCACHE`, when it has one that can be read.
    private static func cachedModel(_ session: PostgreSQLSession) throws -> ManagedObjectModel? {
        guard case .data(let archive)? = try session.execute("SELECT Z_CONTENT FROM Z_MODELCACHE").rows.first?.first else { return nil }
        return try? ManagedObjectModel(archive: archive)
    }

    /// Inside the migration's transaction: drops the store's tables (those of the old `layout`,
    /// Core Data's own and any the new layout names) and derived-attribute functions, and moves
    /// the scratch schema's tables and sequences into the store's schema. Tables of the schema
    /// that are not the store's stay.
    private static func replaceTables(_ session: PostgreSQLSession, of store: PostgreSQLStoreURL, layout: RelationalLayout,
                                      with scratch: PostgreSQLStoreURL) throws {
        let new = try relations(session, in: scratch.schema)
        var ours = Set(layout.tables.map { $0.name.lowercased() } + layout.joinTables.map { $0.name.lowercased() })
        ours.formUnion(["z_primarykey", "z_metadata", "z_modelcache", "achange", "atransaction", "atransactionstring", "achange_z_pk_seq"])
        ours.formUnion(new.map(\.name))
        let current = try relations(session, in: store.schema).filter { ours.contains($0.name) }
        for relation in current.sorted(by: { $0.isTable && !$1.isTable }) {
            try session.execute("DROP \(sql: relation.isTable ? "TABLE" : "SEQUENCE") \(quoted: relation.name, in: store.schema)" as SQLFragment)
        }
        // Tables first (with their indexes); then the sequences no table took along.
        for relation in new where relation.isTable {
            try session.execute("ALTER TABLE \(quoted: relation.name, in: scratch.schema) SET SCHEMA \(quoted: store.schema)" as SQLFragment)
        }
        for relation in try relations(session, in: scratch.schema) where !relation.isTable {
            try session.execute("ALTER SEQUENCE \(quoted: relation.name, in: scratch.schema) SET SCHEMA \(quoted: store.schema)" as SQLFragment)
        }
        // The old tables' derived-attribute functions (their triggers went with the tables).
        let functions = try session.execute("""
            SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
            WHERE n.nspname = \(bind: .string(store.schema)) AND p.proname LIKE 'z\\_da\\_%'
            """).rows
        for case .string(let name)? in functions.map(\.first) {
            try session.execute("DROP FUNCTION \(quoted: name, in: store.schema)()" as SQLFragment)
        }
    }

    /// The tables and sequences of `schema`, by their names in the catalog.
    private static func relations(_ session: PostgreSQLSession, in schema: String) throws -> [(name: String, isTable: Bool)] {
        try session.execute("""
            SELECT c.relname::text, c.relkind = 'r' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = \(bind: .string(schema)) AND c.relkind IN ('r', 'S') ORDER BY c.relname
            """ as SQLFragment).rows.compactMap { row in
            guard case .string(let name) = row[0], case .bool(let isTable) = row[1] else { return nil }
            return (name, isTable)
        }
    }
}
