import CSQLite
import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// One SQLite connection with its statement cache.
///
/// Opened in multi-thread mode (`SQLITE_OPEN_NOMUTEX`): SQLite does no locking of its own for
/// the connection, because its owner already serialises access (the store's writer lock, or the
/// reader pool that lends a connection to one thread at a time).
// @unchecked Sendable: used by one thread at a time, as lent by its owner (see above).
final class SQLiteConnection: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: SQLiteStatement] = [:]
    /// The statements used last, newest first, found by comparing their text before the cache is
    /// asked: hashing a statement's text for the dictionary cost about 900 instructions more per
    /// fault's row read by key (measured), while the same text is most often the very string
    /// used before (a layout's query, equal at once) or differs early.
    private var recent: [(sql: String, statement: SQLiteStatement)] = []
    private static let recentLimit = 4
    /// How many prepared statements a connection keeps.
    static let statementCacheLimit = 256

    /// Opens `path`; `busyTimeout` (milliseconds) is how long a statement waits for another
    /// connection's lock before failing with `SQLITE_BUSY`.
    init(path: String, readOnly: Bool, busyTimeout: Int32 = 10_000) throws {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw CoreDataError(.persistentStoreOpen, """
                Could not open the SQLite store at \(path): \(message). Check that the folder exists and is \
                writable.
                """, storeDetail: .sqlite(code))
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeout)
        SQLiteFunctions.register(on: db)
    }

    deinit {
        for statement in statements.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(message)
            throw SQLiteConnection.error(code: code, message: text, sql: sql)
        }
    }

    /// A prepared statement from the cache (prepared on first use), reset and ready to bind.
    func cachedStatement(_ sql: String) throws -> SQLiteStatement {
        if let index = recent.firstIndex(where: { $0.sql == sql }) {
            let statement = recent[index].statement
            if index > 0 { recent.insert(recent.remove(at: index), at: 0) }
            return Self.ready(statement)
        }
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            statement = Self.ready(cached)
        } else {
            statement = try prepare(sql)
            // Bounded: fetch shapes are few in an app, but a server taking predicates from its users
            // could make new ones forever. Past the limit the cache starts again; a statement still
            // in use is freed when its user lets it go.
            if statements.count >= Self.statementCacheLimit {
                statements.removeAll()
                recent.removeAll()
            }
            statements[sql] = statement
        }
        if recent.count >= Self.recentLimit { recent.removeLast() }
        recent.insert((sql, statement), at: 0)
        return statement
    }

    /// A cached statement left mid-way by a caller that stopped on an error, reset for a new run.
    private static func ready(_ statement: SQLiteStatement) -> SQLiteStatement {
        if sqlite3_stmt_busy(statement.handle) != 0 { sqlite3_reset(statement.handle) }
        return statement
    }

    /// Runs one statement built as a fragment (DDL, a write), without keeping it prepared.
    func execute(_ fragment: SQLFragment) throws {
        let statement = try prepare(fragment)
        defer { statement.finalize() }
        try statement.run()
    }

    /// A prepared statement for `fragment` from the cache (by its text), its values bound; the
    /// caller resets it.
    func cachedStatement(_ fragment: SQLFragment) throws -> SQLiteStatement {
        let (sql, arguments) = fragment.rendered(for: .sqlite)
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        return statement
    }

    /// A new prepared statement for `fragment`, its values bound; the caller finalizes it.
    func prepare(_ fragment: SQLFragment) throws -> SQLiteStatement {
        let (sql, arguments) = fragment.rendered(for: .sqlite)
        let statement = try prepare(sql)
        do { try statement.bind(arguments) } catch {
            statement.finalize()
            throw error
        }
        return statement
    }

    /// A new prepared statement that the caller finalizes.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var stmt: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard code == SQLITE_OK, let stmt else {
            throw SQLiteConnection.error(code: code, message: lastErrorMessage, sql: sql)
        }
        return SQLiteStatement(handle: stmt, connection: self, sql: sql)
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` … `COMMIT`, rolled back on error).
    /// `deferred` begins with `BEGIN` instead, which locks only the databases that `body` writes
    /// (`BEGIN IMMEDIATE` takes the write lock of every attached database too).
    func transaction<T>(deferred: Bool = false, _ body: () throws -> T) throws -> T {
        try execute(deferred ? "BEGIN" : "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The column names of a table, in order (empty for a missing table).
    func columns(of table: String) throws -> [String] {
        let statement = try prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid")
        defer { statement.finalize() }
        try statement.bind([.string(table)])
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0)) }
        return names
    }

    /// An identifier as an SQL literal name: in double quotes, inner quotes doubled.
    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether a table exists.
    func tableExists(_ name: String) throws -> Bool {
        let statement = try cachedStatement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { statement.reset() }
        try statement.bind([.string(name)])
        return try statement.step()
    }

    static func error(code: Int32, message: String, sql: String?) -> CoreDataError {
        let primary = code & 0xff
        if primary == SQLITE_READONLY {
            return CoreDataError(.persistentStoreSave, """
                The store cannot be written: it was opened read-only (with NSReadOnlyPersistentStoreOption, or \
                because it records persistent history and was opened without NSPersistentHistoryTrackingKey), \
                or its file is not writable. Nothing was written. (SQLite: \(message).)
                """, storeDetail: .sqlite(code, sql: sql))
        }
        let coreCode: CoreDataError.Code = switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: .persistentStoreTimeout
        case SQLITE_NOTADB, SQLITE_CORRUPT: .persistentStoreInvalidType
        case SQLITE_CONSTRAINT: .managedObjectConstraintMerge
        default: .sqlite
        }
        return CoreDataError(coreCode, "SQLite error: \(message).", storeDetail: .sqlite(code, sql: sql))
    }
}

extension SQLiteConnection {
    /// The value of an integer pragma (`page_count`: 0 for a file nothing was written to yet;
    /// `schema_version`: changes with every schema change of the main database). `name` is
    /// one of our literals, never input.
    func integerPragma(_ name: StaticString) throws -> Int64 {
        let statement = try cachedStatement("PRAGMA \(name)")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }
}

extension SQLiteConnection {
    /// Switches the file to WAL mode unless it is already in it. The switch needs the file to
    /// itself for a moment and SQLite does not wait (no busy handler) when another connection or
    /// process is opening the same new file, so it is retried until `milliseconds` have passed.
    func enableWAL(waitingUpTo milliseconds: Int32) throws {
        let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
        while true {
            do {
                let mode = try prepare("PRAGMA journal_mode")
                let current = try mode.step() ? mode.string(at: 0) : ""
                mode.finalize()
                if current.lowercased() == "wal" { return }
                try execute("PRAGMA journal_mode = WAL")
                return
            } catch let error as CoreDataError where error.code == .persistentStoreTimeout && Date() < deadline {
                usleep(5_000)
            }
        }
    }
}
