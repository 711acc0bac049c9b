import CSQLite
import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

// Another coordinator or process may migrate the file to another model version while this
// store has it open (the migration rewrites the live file in one transaction). Writes made
// afterwards with this store's layout would land in the new tables under the wrong entity
// numbers and columns, so every write transaction first checks, under the write lock, that the
// schema is still the one this store loaded (`PRAGMA schema_version`: one read of the header;
// the metadata is read only when it moved).
extension SQLiteStore {
    /// Runs `body` in a write transaction on the writer, once the model is known to be unchanged.
    func writeTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try withWriter { db in
            try db.transaction {
                try checkModelUnchanged(db)
                return try body(db)
            }
        }
    }

    /// Throws ``CoreDataError`` 134100 when the store was migrated to a model other than this
    /// store's since it was loaded, and 134030 when another coordinator or process started
    /// recording history in it while this store records none. Call inside a write transaction,
    /// before writing.
    func checkModelUnchanged(_ db: SQLiteConnection) throws {
        guard let expected = lifecycle.withLock({ $0.loaded?.schema }) else { return }
        let version = try db.integerPragma("schema_version")
        guard version != expected.version else { return }
        let stored = try Self.readMetadata(db)["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        guard stored == expected.hashes else {
            throw CoreDataError(.persistentStoreIncompatibleVersionHash, """
                The store at \(url.path) was migrated to another model version by another coordinator or \
                process while it was open here; nothing was written. Open it again with the current model.
                """)
        }
        // The same model, with tables or indexes added. History tables made by another
        // coordinator or process: this store, which records none, becomes read-only.
        if !tracksHistory, try db.hasHistoryTables() { throw HistoryTables.startedElsewhere(in: "the store at \(url.path)") }
        lifecycle.withLock { $0.update { $0.schema = (version, stored) } }
    }
}
