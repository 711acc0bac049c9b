import CSQLite
import Foundation

/// Plain SQL against a store file, through the C API: what the tests use to check the layout
/// independently of the library.
final class RawSQLite {
    private var db: OpaquePointer?

    init(_ url: URL, writable: Bool = false) throws {
        guard sqlite3_open_v2(url.path, &db, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: "cannot open \(url.path)")
        }
    }

    deinit { sqlite3_close_v2(db) }

    /// Every row of a query, each column as Int64, Double, String, Data or nil.
    func rows(_ sql: String) throws -> [[Any?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var result: [[Any?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var row: [Any?] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: row.append(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: row.append(String(cString: sqlite3_column_text(statement, column)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row.append(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count))
                default: row.append(nil)
                }
            }
            result.append(row)
        }
        return result
    }

    /// Runs one statement with `values` (Data, String, Int64, Double or nil) bound in order.
    func execute(_ sql: String, _ values: Any?...) throws {
        try execute(sql, values: values)
    }

    /// Runs one statement with `values` bound in order (see the variadic form).
    func execute(_ sql: String, values: [Any?]) throws {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case let data as Data: _ = data.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
            case let text as String: sqlite3_bind_text(statement, index, text, -1, transient)
            case let number as Int64: sqlite3_bind_int64(statement, index, number)
            case let number as Double: sqlite3_bind_double(statement, index, number)
            default: sqlite3_bind_null(statement, index)
            }
        }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db))) }
    }

    /// The column names of a table, in order.
    func columns(_ table: String) throws -> [String] {
        try rows("PRAGMA table_info(\(table))").compactMap { $0[1] as? String }
    }

    /// The `CREATE` statement SQLite keeps for a table or index.
    func schema(_ name: String) throws -> String? {
        try rows("SELECT sql FROM sqlite_master WHERE name = '\(name)'").first?.first as? String
    }
}

struct RawSQLiteError: Error { var message: String }
