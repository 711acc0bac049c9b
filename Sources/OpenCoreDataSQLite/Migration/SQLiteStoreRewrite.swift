import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Rewrites a store for another model version in place, safely beside other coordinators and
/// processes: the new content is written into a scratch file laid out for the new version, and
/// replaces the store's in one SQLite transaction on the live file. Both migrations use it: the
/// lightweight one (`Migrator`, rows copied in SQL) and the object-by-object one of a migration
/// manager (app code in entity migration policies).
///
/// The live file stays the store throughout (nothing is renamed over it): one connection to it
/// (`live`) holds its write lock from before the first row is read until the migrated content is
/// committed into it, so no other connection or process can commit in between (their writes wait
/// on SQLite's busy timeout and then find the migrated store), and the replacement is one SQLite
/// transaction: after a crash at any point the store is exactly the old version or exactly the
/// new one, with every commit acknowledged before.
package struct SQLiteStoreRewrite {
    let url: URL
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let tracksHistory: Bool

    /// A rewrite of the store at `url` from `source`'s version to `destination`'s; the new file
    /// gets history tables when `tracksHistory` or when the store has them.
    package init(url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel, tracksHistory: Bool) {
        self.url = url
        self.source = source
        self.destination = destination
        self.tracksHistory = tracksHistory
    }

    /// Runs `fill` while the store's write lock is held: it reads the old content (through
    /// connections of its own: readers are not blocked) and writes the new into the scratch file it
    /// is given (empty, laid out for the destination model, in rollback-journal mode, which it must
    /// keep), with whether the store records history. Then the scratch file's content replaces
    /// the store's. Returns `false`, without calling `fill`, when the store is already at the
    /// destination version (another coordinator or process migrated it first).
    package func run(fill: (_ scratch: URL, _ hasHistory: Bool) throws -> Void) throws -> Bool {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).migrating-\(UUID().uuidString)")
        defer { SQLiteStore.removeFiles(at: temporary) }
        let live = try SQLiteConnection(path: url.path, readOnly: false)
        // The new rows are first written into a scratch file laid out for the current model: our
        // own schema, metadata and key table.
        let hadHistory = try live.hasHistoryTables()
        let created = try SQLiteStore(url: temporary, tracksHistory: tracksHistory || hadHistory)
        try created.load(model: destination)
        created.close()
        // The scratch file fills without its indexes, which are made once, in the live file, after
        // the rows are there (a sort each): kept, each would be updated row by row as it fills and
        // then built again in the live file. (Nothing reads the scratch file by them.)
        let indexes = try Self.withoutIndexes(temporary)

        // Attached before the transaction (ATTACH cannot run inside one), and its schema read
        // now, outside it: inside the transaction `live` must not touch the scratch file until
        // the end, or it would hold a read lock (and an old snapshot) of it while it is filled.
        let attach = try live.prepare("ATTACH DATABASE ? AS migrated")
        try attach.bind([.string(temporary.path)])
        try attach.run()
        attach.finalize()
        try live.execute("SELECT count(*) FROM migrated.sqlite_master")
        try live.execute("BEGIN")
        do {
            // A write to the live file alone takes its write lock (and no lock on the scratch file).
            try live.execute("UPDATE main.Z_METADATA SET Z_VERSION = Z_VERSION")
            let stored = try SQLiteStore.readMetadata(live)["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
            if stored == destination.entityVersionHashesByName {
                try live.execute("ROLLBACK")
                return false
            }
            guard stored == source.entityVersionHashesByName else {
                throw CoreDataError(.migration, """
                    The store at \(url.path) changed to another model version while the migration started \
                    (another process migrated it). Open it again.
                    """)
            }
            let hasHistory = try live.hasHistoryTables()
            guard !hasHistory || hadHistory || tracksHistory else {
                throw CoreDataError(.migration, """
                    Another process started recording history in the store at \(url.path) while it was being \
                    migrated; nothing was changed. Open it again.
                    """)
            }
            try fill(temporary, hasHistory)
            try replaceContent(of: live, indexes: indexes)
            try live.execute("COMMIT")
        } catch {
            try? live.execute("ROLLBACK")
            throw error
        }
        try? live.execute("DETACH DATABASE migrated")
        return true
    }

    /// Takes the scratch file out of WAL mode (leaving WAL needs sole access, which it has now), so
    /// that its writer can go without a journal while `live` has it attached, and drops its
    /// indexes; returns them.
    private static func withoutIndexes(_ scratch: URL) throws -> [SchemaEntry] {
        let connection = try SQLiteConnection(path: scratch.path, readOnly: false)
        try connection.execute("PRAGMA journal_mode = DELETE")
        let indexes = try SchemaEntry.all(in: "main", of: connection).filter { $0.type == "index" && $0.sql != nil }
        for index in indexes { try connection.execute("DROP INDEX main.\(SQLiteConnection.quoted(index.name))") }
        return indexes
    }

    /// Inside the live file's transaction: drops Core Data's tables of the old version and makes
    /// the scratch file's tables (the schema SQLite recorded for it, run as it is) with their rows,
    /// then their indexes — the scratch file's `indexes`, left out of it while it filled — and
    /// triggers. Everything else in the file is the app's and stays as it is: its own tables
    /// (full-text indexes included), views, and their indexes and triggers; its indexes and
    /// triggers on Core Data's tables are made again on the new tables.
    private func replaceContent(of live: SQLiteConnection, indexes: [SchemaEntry]) throws {
        let old = try SchemaEntry.all(in: "main", of: live)
        let ownTables = try coreDataTables(in: live)
        let dropped = Set(old.filter { $0.type == "table" && ownTables.contains($0.name.uppercased()) }.map { $0.name.uppercased() })
        // The app's indexes and triggers on Core Data's tables (Core Data names its own after the
        // table or with `Z_`), dropped with their tables and made again below.
        let carried = old.filter { entry in
            (entry.type == "index" || entry.type == "trigger") && entry.sql != nil
                && dropped.contains(entry.table.uppercased()) && !entry.isCoreDataOwn
        }
        for entry in old where entry.type == "table" && dropped.contains(entry.name.uppercased()) {
            try live.execute("DROP TABLE main.\(SQLiteConnection.quoted(entry.name))")
        }

        let new = try SchemaEntry.all(in: "migrated", of: live).filter { $0.sql != nil } + indexes
        let kept = Set(old.filter { !dropped.contains($0.name.uppercased()) && !dropped.contains($0.table.uppercased()) }.map { $0.name.uppercased() })
        if let clash = new.first(where: { kept.contains($0.name.uppercased()) }) {
            throw CoreDataError(.migration, """
                The store at \(url.path) has a \(clash.type) named \(clash.name) that is not Core Data's (the \
                app made it), and the new model version needs that name for its own \(clash.type); nothing was \
                changed. Rename or drop the app's \(clash.type), then open the store again.
                """)
        }
        // The tables with their rows, then their indexes and triggers (which must not fire on
        // rows copied whole); unqualified, these create in `main`: the live file.
        for table in new where table.type == "table" {
            try live.execute(table.sql ?? "")
            let name = SQLiteConnection.quoted(table.name)
            try live.execute("INSERT INTO main.\(name) SELECT * FROM migrated.\(name)")
        }
        for entry in new where entry.type != "table" {
            do {
                try live.execute(entry.sql ?? "")
            } catch let error as CoreDataError where entry.type == "index" && error.code == .managedObjectConstraintMerge {
                throw CoreDataError(.migration, """
                    Cannot migrate \(url.lastPathComponent): rows of the old store share values that the new model \
                    version's uniqueness constraint on \(entry.table) (\(entry.name)) allows once; nothing was changed. \
                    Remove the duplicates with the old model version (or leave the constraint out), then open the \
                    store again.
                    """)
            }
        }
        let made = Set(new.filter { $0.type == "table" }.map { $0.name.uppercased() })
        for entry in carried {
            guard made.contains(entry.table.uppercased()) else {
                throw CoreDataError(.migration, """
                    The store at \(url.path) has the app's own \(entry.type) \(entry.name) on Core Data's \
                    table \(entry.table), which the new model version no longer has (its entity was removed or \
                    renamed); nothing was changed. Drop the \(entry.type) before migrating and make it again \
                    on the new table afterwards.
                    """)
            }
            do {
                try live.execute(entry.sql ?? "")
            } catch {
                throw CoreDataError(.migration, """
                    The store at \(url.path) has the app's own \(entry.type) \(entry.name) on Core Data's \
                    table \(entry.table), and it cannot be made again on the table of the new model version \
                    (\(error)); nothing was changed. Drop the \(entry.type) before migrating and make it again \
                    afterwards.
                    """)
            }
        }
    }

    /// Core Data's tables in the live file for the old version (upper-cased; SQLite's names are
    /// case-insensitive): the entity and join tables of the source model under the store's entity
    /// numbers, the key, metadata and model-cache tables, and the history tables.
    private func coreDataTables(in live: SQLiteConnection) throws -> Set<String> {
        let layout = RelationalLayout(model: source, entityNumbers: try SQLiteStore.storedEntityNumbers(live, model: source))
        let names = layout.tables.map(\.name) + layout.joinTables.map(\.name) + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"] + HistoryTables.tableNames
        return Set(names.map { $0.uppercased() })
    }
}

/// One row of a database's `sqlite_master`.
private struct SchemaEntry {
    var type: String
    var name: String
    var table: String
    var sql: String?

    /// Core Data names the indexes and triggers it makes after their table (`ZNOTE_ZFOLDER_INDEX`)
    /// or with `Z_` (`Z_Note_byTitle`, `Z_DA_…`): the rest on its tables are the app's.
    var isCoreDataOwn: Bool {
        let upper = name.uppercased()
        return upper.hasPrefix("Z_") || upper.hasPrefix(table.uppercased() + "_")
    }

    /// Every entry of `database`'s schema except SQLite's own, in the order SQLite recorded them.
    static func all(in database: String, of connection: SQLiteConnection) throws -> [SchemaEntry] {
        let statement = try connection.prepare("""
            SELECT type, name, tbl_name, sql FROM \(database).sqlite_master WHERE name NOT LIKE 'sqlite_%' \
            ORDER BY rowid
            """)
        defer { statement.finalize() }
        var entries: [SchemaEntry] = []
        while try statement.step() {
            entries.append(SchemaEntry(type: statement.string(at: 0), name: statement.string(at: 1), table: statement.string(at: 2),
                                       sql: statement.isNull(at: 3) ? nil : statement.string(at: 3)))
        }
        return entries
    }
}

extension SQLiteConnection {
    /// Whether the database has Core Data's history tables.
    func hasHistoryTables() throws -> Bool {
        try tableExists("ACHANGE") && tableExists("ATRANSACTION")
    }
}
