import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

// Another coordinator or process may migrate the schema to another model version while this
// store has it open (``PostgreSQLMigration`` replaces the tables in one transaction). Writes
// made afterwards with this store's layout would land in the new tables under the wrong entity
// numbers and columns, so every write transaction first checks that the schema is still the one
// this store loaded. The check also orders writers and migrations without a round trip of its
// own: it is the transaction's first statement (with the change notification it sends anyway),
// and it declares an intent to write `Z_METADATA` — a `ROW EXCLUSIVE` lock held to the commit,
// that a migration's `EXCLUSIVE` lock on the table waits for and blocks. A save that passed the
// check is therefore in the migrated store; one that comes after the migration meets the new
// metadata and is refused, having written nothing.
extension PostgreSQLStore {
    /// Throws ``CoreDataError`` 134100 when the schema was migrated to a model other than this
    /// store's since it was loaded, and 134030 when another coordinator or process started
    /// recording history in it while this store records none. Call as the first statement of a write transaction; with
    /// `notifying`, it also sends the schema's change notification (delivered at the commit).
    /// Returns the transaction's identity (read in the same statement: no round trip of its own),
    /// which tells after a lost COMMIT whether it committed (`resolveLostCommit`).
    @discardableResult
    func checkModelUnchanged(_ session: PostgreSQLSession, notifying: Bool) throws -> WriteTransactionIdentity? {
        // A data-modifying WITH runs (and locks its table) whether or not the query reads it.
        let intent = "WITH intent AS (UPDATE Z_METADATA SET Z_VERSION = Z_VERSION WHERE FALSE RETURNING Z_VERSION) "
        // Whether history is recorded is read in the same statement: another coordinator or
        // process may have started recording it after this store, which records none, was opened.
        let select = "SELECT md5(Z_PLIST), to_regclass('atransaction') IS NOT NULL, txid_current(), pg_backend_pid() FROM Z_METADATA"
        let rows = notifying
            ? try session.execute("""
                \(sql: intent + select), pg_notify(\(bind: .string(channel)), \(bind: .string(identifier))) WHERE Z_VERSION = 1
                """).rows
            : try session.execute("\(sql: intent + select) WHERE Z_VERSION = 1").rows
        guard let row = rows.first, case .string(let digest)? = row.first else {
            throw CoreDataError(.persistentStoreIncompatibleVersionHash, """
                The PostgreSQL store \(url.description) lost its Z_METADATA row while it was open here; \
                nothing was written. Was the schema changed by hand?
                """)
        }
        if !tracksHistory, row.count > 1, case .bool(true) = row[1] {
            throw HistoryTables.startedElsewhere(in: "the PostgreSQL store \(url.description)")
        }
        var identity: WriteTransactionIdentity?
        if row.count > 3, case .integer(let transaction) = row[2], case .integer(let backend) = row[3] {
            identity = WriteTransactionIdentity(transaction: transaction, backend: backend)
        }
        if lifecycle.withLock({ $0.loaded?.checkedDigest }) == digest { return identity }
        // The property list changed (app metadata, or a migration): compare the model versions.
        let stored = try Self.readMetadata(session)["NSStoreModelVersionHashes"] as? [String: Data]
        guard stored == (try metadata()["NSStoreModelVersionHashes"] as? [String: Data]) else {
            throw CoreDataError(.persistentStoreIncompatibleVersionHash, """
                The PostgreSQL store \(url.description) was migrated to another model version by another \
                coordinator or process while it was open here; nothing was written. Open it again with the \
                current model.
                """)
        }
        lifecycle.withLock { $0.update { $0.checkedDigest = digest } }
        return identity
    }

    /// Runs `body` in a transaction on a pooled session, first checking that the schema was not
    /// migrated (for writes that send no change notification: metadata, imported or deleted
    /// history; saves and batch requests go through `writeTransaction`).
    func checkedTransaction<T>(_ body: (PostgreSQLSession) throws -> T) throws -> T {
        try pool.withSession { session in
            try session.transaction {
                try checkModelUnchanged(session, notifying: false)
                return try body(session)
            }
        }
    }
}
