import CSQLitePeer
import Foundation
import GRDB
import OpenCoreData

/// A note whose `id` is indexed (`Z_IndexedNote_id`), for the selective indexed fetch.
@Managed
final class IndexedNote: ManagedObject {
    @Attribute(.indexed) var id: Int32 = 0
    var text1: String?
}

/// Fetch one row by an indexed attribute among `n`, three ways (the median of `runs` fetches).
enum IndexedScenario {
    static func run(n: Int, runs: Int) throws -> Result {
        let middle = Int32(n / 2)
        let table = "CREATE TABLE ZINDEXEDNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER, ZTEXT1 VARCHAR); CREATE INDEX Z_IndexedNote_id ON ZINDEXEDNOTE (ZID COLLATE BINARY ASC)"

        // Ours: rows written with a batch insert, then fetched through a context.
        let container = PersistentContainer(name: "Indexed", managedObjectModel: ManagedObjectModel(IndexedNote.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: scratchFile("indexed.sqlite"))]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let ours = try context.performAndWait { () throws -> [Double] in
            _ = try context.execute(BatchInsertRequest(entityName: "IndexedNote", objects: (0..<n).map { ["id": Int32($0), "text1": "row \($0)"] }))
            return try (0..<runs).map { _ in
                try measure {
                    let request = IndexedNote.fetchRequest()
                    request.predicate = NSPredicate(format: "id == %d", middle)
                    let count = try context.fetch(request).count
                    precondition(count == 1)
                    context.reset()
                }
            }
        }

        // Raw SQLite.
        var db: OpaquePointer?
        sqlite3_open(scratchFile("indexed-raw.sqlite").path, &db)
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; " + table + "; BEGIN", nil, nil, nil)
        var insert: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO ZINDEXEDNOTE (Z_PK, Z_ENT, Z_OPT, ZID, ZTEXT1) VALUES (?, 1, 1, ?, ?)", -1, &insert, nil)
        for index in 0..<n {
            sqlite3_bind_int64(insert, 1, Int64(index + 1))
            sqlite3_bind_int64(insert, 2, Int64(index))
            sqlite3_bind_text(insert, 3, "row \(index)", -1, peer_sqlite_transient())
            sqlite3_step(insert)
            sqlite3_reset(insert)
        }
        sqlite3_finalize(insert)
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
        let raw = (0..<runs).map { _ in
            measure {
                var select: OpaquePointer?
                sqlite3_prepare_v2(db, "SELECT Z_PK, ZID, ZTEXT1 FROM ZINDEXEDNOTE WHERE ZID = ?", -1, &select, nil)
                sqlite3_bind_int64(select, 1, Int64(middle))
                var found = 0
                while sqlite3_step(select) == SQLITE_ROW { found += sqlite3_column_text(select, 2) == nil ? 0 : 1 }
                sqlite3_finalize(select)
                precondition(found == 1)
            }
        }

        // GRDB.
        let pool = try DatabasePool(path: scratchFile("indexed-grdb.sqlite").path)
        try pool.write { db in
            try db.execute(sql: table)
            let statement = try db.cachedStatement(sql: "INSERT INTO ZINDEXEDNOTE (Z_PK, Z_ENT, Z_OPT, ZID, ZTEXT1) VALUES (?, 1, 1, ?, ?)")
            for index in 0..<n { try statement.execute(arguments: [index + 1, index, "row \(index)"]) }
        }
        let grdb = try (0..<runs).map { _ in
            try measure {
                let rows = try pool.read { db in try Row.fetchAll(db, sql: "SELECT Z_PK, ZID, ZTEXT1 FROM ZINDEXEDNOTE WHERE ZID = ?", arguments: [middle]) }
                precondition(rows.count == 1)
            }
        }
        return Result(scenario: "fetch 1 by an indexed attribute", n: n, ours: median(ours), raw: median(raw), grdb: median(grdb))
    }
}
