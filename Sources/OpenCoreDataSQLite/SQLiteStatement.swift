import CSQLite
import Foundation
import OpenCoreDataCore

/// A prepared statement: binds ``ManagedValue``s and reads columns straight into them.
// @unchecked Sendable: belongs to one connection and is used only by the thread holding it.
final class SQLiteStatement: @unchecked Sendable {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    let sql: String
    /// The bytes of this use's text and blob values (see `SQLiteBindingArena`).
    private let arena = SQLiteBindingArena()

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    private var isFinalized = false

    /// Frees the statement (once; a statement nobody finalized is freed when released, e.g. a
    /// cached statement evicted while a caller still steps through it).
    func finalize() {
        guard !isFinalized else { return }
        isFinalized = true
        sqlite3_finalize(handle)
    }

    deinit { finalize() }

    /// Resets the statement and clears its bindings (after each use of a cached statement).
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        arena.reuse()   // no binding refers to its bytes any more
    }

    /// Binds values to parameters 1…n.
    func bind(_ values: some Collection<ManagedValue>, from start: Int32 = 1) throws {
        var index = start
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    func bind(_ value: ManagedValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let v): code = sqlite3_bind_int64(handle, index, v)
        case .bool(let v): code = sqlite3_bind_int64(handle, index, v ? 1 : 0)
        case .double(let v): code = sqlite3_bind_double(handle, index, v)
        case .date(let v): code = sqlite3_bind_double(handle, index, v.timeIntervalSinceReferenceDate)
        case .decimal(let v): code = bindText("\(v)", at: index)
        case .string(let v): code = bindText(v, at: index)
        case .url(let v): code = bindText(v.absoluteString, at: index)
        case .data(let v): code = v.withUnsafeBytes { bindBlob($0, at: index) }
        case .uuid(let v):
            let bytes = v.bytes
            code = bytes.withUnsafeBytes { bindBlob($0, at: index) }
        case .object(let id):
            // A to-one relationship's foreign key. Contexts give objects permanent IDs before
            // they write them, so an unsaved destination here is a bug in the caller.
            guard let key = id.primaryKey else {
                throw CoreDataError(.persistentStoreSave, """
                    The object \(id) has no permanent ID yet; it cannot be referenced in the store. Save or \
                    obtainPermanentIDs(for:) first.
                    """)
            }
            code = sqlite3_bind_int64(handle, index, key)
        }
        guard code == SQLITE_OK else { throw SQLiteConnection.error(code: code, message: connection.lastErrorMessage, sql: sql) }
    }

    /// Binds bytes as a blob: the arena's copy, read in place (a null destructor is
    /// SQLITE_STATIC), or SQLite's own copy when they do not fit.
    private func bindBlob(_ buffer: UnsafeRawBufferPointer, at index: Int32) -> Int32 {
        if let copied = arena.copy(buffer) { return sqlite3_bind_blob(handle, index, copied, Int32(buffer.count), nil) }
        // An empty buffer may have no base address; SQLite needs a pointer for an empty blob.
        return sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), ocd_sqlite_transient())
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            // A null destructor is SQLITE_STATIC: SQLite reads the arena's copy in place.
            if let copied = arena.copy(UnsafeRawBufferPointer(buffer)) {
                return sqlite3_bind_text(handle, index, copied.bindMemory(to: CChar.self, capacity: buffer.count), Int32(buffer.count), nil)
            }
            // An empty buffer may have no base address; SQLite needs a pointer for an empty string.
            guard let base = buffer.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, ocd_sqlite_transient()) }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(handle, index, $0, Int32(buffer.count), ocd_sqlite_transient())
            }
        }
    }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Steps once: `true` when a row is available, `false` when done.
    @discardableResult
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteConnection.error(code: code, message: connection.lastErrorMessage, sql: sql)
            // A failed statement stays halted (binding to it is API misuse) until reset: reset
            // it here, so that a cached statement is usable again after an I/O error.
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        defer { reset() }
        try step()
    }

    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The number of columns of the statement's rows.
    var columnCount: Int { Int(sqlite3_column_count(handle)) }

    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func string(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func data(at column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let blob = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: blob, count: count)
    }

    /// Reads a column as the stored form of an attribute of `type`.
    /// A column as SQLite holds it (by its storage class), whatever attribute it belongs to.
    func storedValue(at column: Int32) -> ManagedValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(at: column))
        case SQLITE_FLOAT: .double(double(at: column))
        case SQLITE_TEXT: .string(string(at: column))
        case SQLITE_BLOB: .data(data(at: column))
        default: .null
        }
    }

    func value(at column: Int32, type: AttributeType) -> ManagedValue {
        if type == .string {
            // SQLite's text of NULL is a null pointer (its conversion table), so the common case
            // needs no separate type call; a null pointer for anything else is out of memory,
            // read as the empty string as `string(at:)` does.
            guard let text = sqlite3_column_text(handle, column) else {
                return sqlite3_column_type(handle, column) == SQLITE_NULL ? .null : .string("")
            }
            return .string(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self))
        }
        if sqlite3_column_type(handle, column) == SQLITE_NULL { return .null }
        switch type {
        case .integer16, .integer32, .integer64, .objectID: return .integer(sqlite3_column_int64(handle, column))
        case .boolean: return .bool(sqlite3_column_int64(handle, column) != 0)
        case .double, .float: return .double(sqlite3_column_double(handle, column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: sqlite3_column_double(handle, column)))
        case .decimal: return Decimal(string: string(at: column), locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) } ?? .null
        case .string: return .string(string(at: column))
        case .uri: return URL(string: string(at: column)).map { .url($0) } ?? .null
        case .binaryData, .transformable: return .data(data(at: column))
        case .uuid:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count == 16, let blob = sqlite3_column_blob(handle, column) else { return .null }
            return UUID(bytes: UnsafeRawBufferPointer(start: blob, count: 16)).map { .uuid($0) } ?? .null
        }
    }
}
