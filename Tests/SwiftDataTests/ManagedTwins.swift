#if os(Linux)
import Foundation
import OpenCoreData

// The models of Models.swift declared as Core Data code declares them (`@Managed` subclasses of
// `ManagedObject`), under the same entity names: where SwiftData and Core Data agree, both
// must describe the same store. Only this file imports OpenCoreData (its `@Attribute` and
// `@Relationship` are the `@Managed` ones).

@Managed(entityName: "Trip")
final class ManagedTrip: ManagedObject {
    @Attribute(.unique) var name: String = ""
    var destination: String = ""
    var start: Date = .distantPast
    var budget: Double = 0
    var notes: String?
    @Relationship(deleteRule: .cascade, inverse: \ManagedStop.trip) var stops: Set<ManagedStop> = []
}

@Managed(entityName: "Stop")
final class ManagedStop: ManagedObject {
    var title: String = ""
    var order: Int = 0
    var trip: ManagedTrip?
}

/// The entity version hashes of the `@Managed` twins.
func managedTwinVersionHashes() -> [String: Data] {
    ManagedObjectModel(ManagedTrip.self, ManagedStop.self).entityVersionHashesByName
}

/// The entity version hashes an SQLite store file records in its metadata.
func storeVersionHashes(at url: URL) throws -> [String: Data] {
    let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
    return metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
}
#endif
#if os(Linux)
import CSQLite

/// The names of the indexes an SQLite store file has on a table.
func sqliteIndexNames(at url: URL, table: String) -> [String] {
    sqliteSchemaNames(at: url, type: "index", table: table)
}

/// The number of rows of a table of an SQLite store file (`nil` when it has no such table).
func sqliteRowCount(at url: URL, table: String) -> Int? {
    guard sqliteSchemaNames(at: url, type: "table", table: table).contains(table) else { return nil }
    var db: OpaquePointer?
    guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    // The table name is one the test names, checked against the file's tables above.
    guard sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM \"\(table)\"", -1, &statement, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_finalize(statement) }
    return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : nil
}

/// The names of the schema objects of a type (on `table`, when given) of an SQLite file.
private func sqliteSchemaNames(at url: URL, type: String, table: String?) -> [String] {
    var db: OpaquePointer?
    guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return [] }
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    let sql = "SELECT name FROM sqlite_master WHERE type = ?1 AND (?2 IS NULL OR tbl_name = ?2)"
    guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
    defer { sqlite3_finalize(statement) }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    sqlite3_bind_text(statement, 1, type, -1, transient)
    if let table { sqlite3_bind_text(statement, 2, table, -1, transient) } else { sqlite3_bind_null(statement, 2) }
    var names: [String] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        if let text = sqlite3_column_text(statement, 0) { names.append(String(cString: text)) }
    }
    return names.sorted()
}
#endif
