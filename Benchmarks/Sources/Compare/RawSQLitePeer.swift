import CSQLitePeer
import Foundation

/// The practical limit: the SQLite C API with one prepared statement in one transaction.

final class RawSQLitePeer {
    private var db: OpaquePointer?

    init(path: String) {
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = NORMAL")
        exec(noteTableSQL)
    }

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) {
        sqlite3_exec(db, sql, nil, nil, nil)
    }

    func insert(_ notes: [RawNote]) {
        exec("BEGIN IMMEDIATE")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZID, ZTEXT1, ZTEXT2, ZTEXT3) VALUES (?, 1, 1, ?, ?, ?, ?)", -1, &statement, nil)
        for note in notes {
            sqlite3_bind_int64(statement, 1, note.pk)
            sqlite3_bind_int64(statement, 2, Int64(note.id))
            bind(statement, 3, note.text1)
            bind(statement, 4, note.text2)
            bind(statement, 5, note.text3)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
    }

    private func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String?) {
        guard var text else { sqlite3_bind_null(statement, index); return }
        text.withUTF8 { buffer in
            _ = buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), peer_sqlite_transient()) }
        }
    }

    func fetchAll() -> [RawNote] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT Z_PK, ZID, ZTEXT1, ZTEXT2, ZTEXT3 FROM ZNOTE", -1, &statement, nil)
        var result: [RawNote] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(RawNote(pk: sqlite3_column_int64(statement, 0), id: Int32(sqlite3_column_int64(statement, 1)), text1: text(statement, 2), text2: text(statement, 3), text3: text(statement, 4)))
        }
        sqlite3_finalize(statement)
        return result
    }

    /// Reads every row into a struct, one at a time (the memory peer).
    func iterate() -> Int {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT ZID, ZTEXT1 FROM ZNOTE", -1, &statement, nil)
        var checksum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            let note = RawNote(pk: 0, id: Int32(sqlite3_column_int64(statement, 0)), text1: text(statement, 1), text2: nil, text3: nil)
            checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0)
        }
        sqlite3_finalize(statement)
        return checksum
    }

    /// `SUM(ZID)` per `ZTEXT2` (the dictionary-results peer): the first group's sum.
    func groupSums() -> Int64 {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT ZTEXT2, SUM(ZID) FROM ZNOTE GROUP BY ZTEXT2", -1, &statement, nil)
        var first: Int64 = -1
        while first < 0, sqlite3_step(statement) == SQLITE_ROW { first = sqlite3_column_int64(statement, 1) }
        sqlite3_finalize(statement)
        return first
    }

    /// Rows whose unindexed `ZID` equals `id`.
    func select(id: Int32) -> [RawNote] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT Z_PK, ZID, ZTEXT1, ZTEXT2, ZTEXT3 FROM ZNOTE WHERE ZID = ?", -1, &statement, nil)
        sqlite3_bind_int64(statement, 1, Int64(id))
        var result: [RawNote] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(RawNote(pk: sqlite3_column_int64(statement, 0), id: Int32(sqlite3_column_int64(statement, 1)), text1: text(statement, 2), text2: text(statement, 3), text3: text(statement, 4)))
        }
        sqlite3_finalize(statement)
        return result
    }

    /// One row by primary key per key, through one prepared statement.
    func lookup(_ keys: [Int64]) -> Int {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT Z_PK, ZID, ZTEXT1, ZTEXT2, ZTEXT3 FROM ZNOTE WHERE Z_PK = ?", -1, &statement, nil)
        var found = 0
        for key in keys {
            sqlite3_bind_int64(statement, 1, key)
            if sqlite3_step(statement) == SQLITE_ROW {
                let note = RawNote(pk: sqlite3_column_int64(statement, 0), id: Int32(sqlite3_column_int64(statement, 1)), text1: text(statement, 2), text2: text(statement, 3), text3: text(statement, 4))
                found += note.text1 == nil ? 0 : 1
            }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        return found
    }

    /// Sets `ZTEXT2` and bumps `Z_OPT` of every row, one statement, one transaction.
    func update(_ keys: [Int64], text: String) {
        exec("BEGIN IMMEDIATE")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "UPDATE ZNOTE SET Z_OPT = Z_OPT + 1, ZTEXT2 = ? WHERE Z_PK = ?", -1, &statement, nil)
        for key in keys {
            bind(statement, 1, text)
            sqlite3_bind_int64(statement, 2, key)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
    }

    /// Deletes every row with one statement.
    func deleteAll() {
        exec("DELETE FROM ZNOTE")
    }

    /// Deletes rows one by one, one statement, one transaction.
    func delete(_ keys: [Int64]) {
        exec("BEGIN IMMEDIATE")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "DELETE FROM ZNOTE WHERE Z_PK = ?", -1, &statement, nil)
        for key in keys {
            sqlite3_bind_int64(statement, 1, key)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
    }

    private func text(_ statement: OpaquePointer?, _ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }
}
