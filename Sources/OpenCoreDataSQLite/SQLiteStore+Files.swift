import CSQLite
import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Whole-file operations on SQLite stores that are not added to a coordinator: emptying one,
/// replacing one by a copy of another, rewriting the metadata. Each goes through SQLite (its
/// online backup or a transaction), so connections other processes hold on the file see a
/// consistent database throughout, in WAL mode too.
extension SQLiteStore {
    /// Empties the database at `url` (Core Data truncates the file too): every table, the
    /// metadata and the history go. Nothing to do when there is no file.
    package static func destroy(at url: URL, options: SQLiteStoreOptions) throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let destination = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: options.busyTimeoutMilliseconds)
        let empty = try SQLiteConnection(path: ":memory:", readOnly: false)
        // A WAL database takes a backup only from a source of its own page size.
        try empty.execute("PRAGMA page_size = \(try pageSize(of: destination))")
        try backup(from: empty, to: destination, what: "empty the store at \(url.path)")
    }

    /// Makes the database at `destination` a copy of the store at `source` (created when
    /// missing). The source must be a Core Data SQLite store.
    package static func replace(at destination: URL, from source: URL, options: SQLiteStoreOptions) throws {
        _ = try metadata(at: source)     // a Core Data store, or a clear error
        let from = try SQLiteConnection(path: source.path, readOnly: true, busyTimeout: options.busyTimeoutMilliseconds)
        let to = try SQLiteConnection(path: destination.path, readOnly: false, busyTimeout: options.busyTimeoutMilliseconds)
        try backup(from: from, to: to, what: "copy the store at \(source.path) to \(destination.path)")
    }

    /// Where a store meant for `destination` is written before it is put in place
    /// (`install(_:at:options:)`): `.NAME.migrating` beside it. What a crashed attempt left there
    /// is removed first.
    package static func stagingFile(for destination: URL) throws -> URL {
        guard destination.isFileURL else {
            throw CoreDataError(.persistentStoreOpen, "An SQLite store needs a file URL, not \(destination.absoluteString).")
        }
        let staging = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).migrating")
        removeFiles(at: staging)
        return staging
    }

    /// Puts the closed store at `staging` in place at `destination`, whole or not at all across a
    /// crash, then removes `staging`'s files. A new destination is `staging` itself, its WAL
    /// checkpointed into the main file and renamed: a crash leaves no file or the complete one,
    /// never one with a journal to roll back first (which a read-only open cannot). An existing
    /// destination becomes a copy in one SQLite transaction (a crash leaves it as it was).
    package static func install(_ staging: URL, at destination: URL, options: SQLiteStoreOptions) throws {
        defer { removeFiles(at: staging) }
        guard FileManager.default.fileExists(atPath: destination.path) else {
            try closeIntoMainFile(staging, busyTimeout: options.busyTimeoutMilliseconds)
            // A journal or WAL without its database is a crashed writer's: never to be replayed
            // into this one.
            for suffix in ["-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: destination.path + suffix) }
            guard rename(staging.path, destination.path) == 0 else {
                throw CoreDataError(.persistentStoreOperation, """
                    Could not move the store written at \(staging.path) to \(destination.path): \
                    \(String(cString: strerror(errno))). Check that the folder is writable.
                    """)
            }
            syncFolder(of: destination)
            return
        }
        try replace(at: destination, from: staging, options: options)
    }

    /// Leaves the whole database at `url` in its main file: the WAL checkpointed into it and
    /// removed by closing the last connection. The file keeps its journal mode (WAL for a store
    /// written with our defaults), so the engine that opens it in place has nothing to write: a
    /// switch to WAL there would go through a rollback journal, and a crash during it would leave
    /// a hot journal that a read-only open cannot roll back.
    private static func closeIntoMainFile(_ url: URL, busyTimeout: Int32) throws {
        do {
            let db = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: busyTimeout)
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        guard !FileManager.default.fileExists(atPath: url.path + "-wal") else {
            throw CoreDataError(.persistentStoreOperation, """
                The store written at \(url.path) is still in use, so it cannot be moved into place; close what \
                else has it open and try again.
                """)
        }
    }

    /// Makes a rename in the folder of `url` durable (fsync of the folder); best effort, as a
    /// folder that cannot be opened still holds the renamed file.
    private static func syncFolder(of url: URL) {
        guard let folder = FileHandle(forReadingAtPath: url.deletingLastPathComponent().path) else { return }
        try? folder.synchronize()
        try? folder.close()
    }

    /// Removes the database file at `url` and its journal, WAL and shared-memory files.
    package static func removeFiles(at url: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    /// Rewrites the metadata of the store at `url`: the app's keys as given (property-list
    /// values), the store's own keys (type, UUID, version hashes, …) kept unless given.
    package static func setMetadata(_ metadata: [String: Any], at url: URL, options: SQLiteStoreOptions) throws {
        let db = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: options.busyTimeoutMilliseconds)
        try writeMetadata(metadata, over: try self.metadata(at: url), db: db)
    }

    /// Rewrites the metadata of this (added) store the same way, at once; its UUID stays (object
    /// IDs name the store by it).
    package func setMetadata(_ metadata: [String: Any]) throws {
        if let uuid = metadata["NSStoreUUID"] as? String, uuid != identifier {
            throw CoreDataError(.persistentStoreOperation, """
                The UUID of a store added to a coordinator cannot change (its objects' IDs name it); remove \
                the store, then use setMetadata(_:forPersistentStoreOfType:at:).
                """)
        }
        try withWriter { db in
            try Self.writeMetadata(metadata, over: try Self.readMetadata(db), db: db)
            let written = try Self.readMetadata(db)
            updateLoadedMetadata(written)
        }
    }

    /// Writes `metadata` (the app's keys) over `current`, keeping the store's own keys.
    private static func writeMetadata(_ metadata: [String: Any], over current: [String: Any], db: SQLiteConnection) throws {
        let data = try StoreMetadataPlist.replacingAppKeys(metadata, over: current)
        let uuid = metadata["NSStoreUUID"] as? String ?? current["NSStoreUUID"] as? String ?? UUID().uuidString
        try db.transaction {
            let statement = try db.prepare("UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ? WHERE Z_VERSION = 1")
            defer { statement.finalize() }
            try statement.bind([.string(uuid), .data(data)])
            try statement.run()
        }
    }

    private static func pageSize(of db: SQLiteConnection) throws -> Int64 {
        let statement = try db.cachedStatement("PRAGMA page_size")
        defer { statement.reset() }
        guard try statement.step() else { return 4096 }
        return statement.int64(at: 0)
    }

    /// SQLite's online backup of `source` onto `destination`, in one step.
    private static func backup(from source: SQLiteConnection, to destination: SQLiteConnection, what: String) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw CoreDataError(.persistentStoreOperation, "Could not \(what): \(String(cString: sqlite3_errmsg(destination.handle))).",
                                storeDetail: .sqlite(sqlite3_errcode(destination.handle)))
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            let code = step == SQLITE_DONE ? finish : step
            let error = SQLiteConnection.error(code: code, message: String(cString: sqlite3_errstr(code)), sql: nil)
            throw CoreDataError(error.code, """
                Could not \(what): \(error.message) Nothing was changed; make sure no other connection is \
                writing to it, and retry.
                """, storeDetail: .sqlite(code))
        }
    }
}
