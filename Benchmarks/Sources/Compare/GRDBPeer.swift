import Foundation
import GRDB

/// GRDB records in their fastest idiomatic form, on a DatabasePool (WAL), `synchronous = NORMAL`.
final class GRDBPeer {
    let pool: DatabasePool

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: noteTableSQL) }
    }

    func insert(_ notes: [RawNote]) throws {
        try pool.write { db in for note in notes { try note.insert(db) } }
    }

    func fetchAll() throws -> [RawNote] {
        try pool.read { db in try RawNote.fetchAll(db) }
    }

    func select(id: Int32) throws -> [RawNote] {
        try pool.read { db in try RawNote.filter(Column("ZID") == id).fetchAll(db) }
    }

    /// `SUM(ZID)` per `ZTEXT2`: the first group's sum.
    func groupSums() throws -> Int64 {
        try pool.read { db in try Row.fetchAll(db, sql: "SELECT ZTEXT2, SUM(ZID) FROM ZNOTE GROUP BY ZTEXT2").first?[1] ?? -1 }
    }

    func lookup(_ keys: [Int64]) throws -> Int {
        try pool.read { db in
            var found = 0
            for key in keys where try RawNote.fetchOne(db, key: key) != nil { found += 1 }
            return found
        }
    }

    func update(_ keys: [Int64], text: String) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE ZNOTE SET Z_OPT = Z_OPT + 1, ZTEXT2 = ? WHERE Z_PK = ?")
            for key in keys { try statement.execute(arguments: [text, key]) }
        }
    }

    func deleteAll() throws {
        _ = try pool.write { db in try RawNote.deleteAll(db) }
    }

    func delete(_ keys: [Int64]) throws {
        try pool.write { db in for key in keys { _ = try RawNote.deleteOne(db, key: key) } }
    }
}
