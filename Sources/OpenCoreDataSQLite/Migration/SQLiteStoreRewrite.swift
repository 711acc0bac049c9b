import Foundation
import OpenCoreDataCore

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
        let sidecars = { (file: URL) in ["-wal", "-shm", "-journal"].map { URL(fileURLWithPath: file.path + $0) } }
        defer {
            for file in [temporary] + sidecars(temporary) { try? FileManager.default.removeItem(at: file) }
        }
        let live = try SQLiteConnection(path: url.path, readOnly: false)
        // The new rows are first written into a scratch file laid out for the current model: our
        // own schema, metadata and key table.
        let hadHistory = try live.hasHistoryTables()
        let created = try SQLiteStore(url: temporary, tracksHistory: tracksHistory || hadHistory)
        try created.load(model: destination)
        created.close()
        // Out of WAL mode while nobody else has it open (leaving WAL needs sole access), so that
        // its writer can go without a journal while `live` has it attached.
        try SQLiteConnection(path: temporary.path, readOnly: false).execute("PRAGMA journal_mode = DELETE")

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
                throw CoreDataError(.migration, "The store at \(url.path) changed to another model version while the migration started (another process migrated it). Open it again.")
            }
            let hasHistory = try live.hasHistoryTables()
            guard !hasHistory || hadHistory || tracksHistory else {
                throw CoreDataError(.migration, "Another process started recording history in the store at \(url.path) while it was being migrated; nothing was changed. Open it again.")
            }
            try fill(temporary, hasHistory)
            try replaceContent(of: live)
            try live.execute("COMMIT")
        } catch {
            try? live.execute("ROLLBACK")
            throw error
        }
        try? live.execute("DETACH DATABASE migrated")
        return true
    }

    /// Inside the live file's transaction: drops the old tables and makes the scratch file's
    /// tables and indexes (the schema SQLite recorded for it, run as it is) with their rows.
    private func replaceContent(of live: SQLiteConnection) throws {
        let old = try live.prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        var oldTables: [String] = []
        while try old.step() { oldTables.append(old.string(at: 0)) }
        old.finalize()
        for table in oldTables { try live.execute("DROP TABLE main.\(SQLiteConnection.quoted(table))") }

        let new = try live.prepare("SELECT type, name, sql FROM migrated.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid")
        var tables: [String] = []
        var definitions: [String] = []
        while try new.step() {
            if new.string(at: 0) == "table" { tables.append(new.string(at: 1)) }
            definitions.append(new.string(at: 2))
        }
        new.finalize()
        // Unqualified, these create in `main`: the live file.
        for definition in definitions { try live.execute(definition) }
        for table in tables {
            let name = SQLiteConnection.quoted(table)
            try live.execute("INSERT INTO main.\(name) SELECT * FROM migrated.\(name)")
        }
    }
}

extension SQLiteConnection {
    /// Whether the database has Core Data's history tables.
    func hasHistoryTables() throws -> Bool {
        try tableExists("ACHANGE") && tableExists("ATRANSACTION")
    }
}
