import CSQLitePeer
import Foundation
import OpenCoreData
#if PostgreSQL
import OpenCoreDataPostgreSQL
#endif

/// Lightweight migration of a store of `n` quakes to a version that renames `place` to
/// `location` (renaming identifier) and adds a mandatory `felt` with a default: ours (opening
/// the store with the new model) against raw SQLite rebuilding the same table the same way
/// (new table, `INSERT … SELECT`, drop, rename, unique index) — the least work the change needs.
enum MigrationScenario {
    static func run(n: Int) throws -> Result {
        var ours: [Double] = [], raw: [Double] = []
        for _ in 0..<3 {
            let url = scratchFile("migrate.sqlite")
            try fill(url, n: n)
            ours.append(try measure { _ = try openWithVersion2(url) })
            let rawURL = scratchFile("migrate-raw.sqlite")
            try fill(rawURL, n: n)
            raw.append(rawMigration(path: rawURL.path))
        }
        let oursMS = median(ours), rawMS = median(raw)
        return Result(scenario: "migrate N rows (rename + new mandatory attribute)", n: n, ours: oursMS, raw: rawMS, grdb: nil,
                      extra: ["ours_rows_per_s": Double(n) / oursMS * 1000])
    }

    /// The store at `url` opened with the second version (migrated on the way).
    private static func openWithVersion2(_ url: URL, type: PersistentStore.StoreType = .sqlite) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Migrate", managedObjectModel: version2())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: type)]
        try container.loadPersistentStores()
        return container
    }

    /// The first version's store, filled with a batch insert.
    private static func fill(_ url: URL, type: PersistentStore.StoreType = .sqlite, n: Int) throws {
        let container = PersistentContainer(name: "Migrate", managedObjectModel: ManagedObjectModel(BenchQuake.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: type)]
        try container.loadPersistentStores()
        let entity = container.managedObjectModel.entitiesByName["BenchQuake"]!
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let rows: [[String: Any]] = (0..<n).map { index in
                ["code": "q\(index)", "magnitude": Double(index % 70) / 10, "place": "place \(index % 1000)",
                 "time": Date(timeIntervalSinceReferenceDate: Double(index)), "latitude": 0.0, "longitude": 0.0, "depth": 1.0]
            }
            _ = try context.execute(BatchInsertRequest(entity: entity, objects: rows))
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
    }

    private static func version2() -> ManagedObjectModel {
        let old = BenchQuake.makeEntityDescription()
        var properties = old.properties.compactMap { $0 as? AttributeDescription }.map { attribute -> AttributeDescription in
            let copy = AttributeDescription(name: attribute.name == "place" ? "location" : attribute.name, type: attribute.attributeType,
                                            isOptional: attribute.isOptional, defaultValue: attribute.defaultValue)
            if attribute.name == "place" { copy.renamingIdentifier = "place" }
            return copy
        }
        properties.append(AttributeDescription(name: "felt", type: .integer16, isOptional: false, defaultValue: 0))
        let entity = EntityDescription(name: "BenchQuake", properties: properties)
        entity.uniquenessConstraints = old.uniquenessConstraints
        return ManagedObjectModel(entities: [entity])
    }

    private static func rawMigration(path: String) -> Double {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(db) }
        return measure {
            sqlite3_exec(db, """
                BEGIN IMMEDIATE;
                CREATE TABLE ZNEW (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFELT INTEGER, ZDEPTH FLOAT, ZLATITUDE FLOAT, ZLONGITUDE FLOAT, ZMAGNITUDE FLOAT, ZTIME TIMESTAMP, ZCODE VARCHAR, ZLOCATION VARCHAR);
                INSERT INTO ZNEW SELECT Z_PK, Z_ENT, Z_OPT, 0, ZDEPTH, ZLATITUDE, ZLONGITUDE, ZMAGNITUDE, ZTIME, ZCODE, ZPLACE FROM ZBENCHQUAKE;
                DROP TABLE ZBENCHQUAKE;
                ALTER TABLE ZNEW RENAME TO ZBENCHQUAKE;
                CREATE UNIQUE INDEX Z_BenchQuake_UNIQUE_code ON ZBENCHQUAKE (ZCODE COLLATE BINARY ASC);
                COMMIT;
                """, nil, nil, nil)
        }
    }
}

#if PostgreSQL
extension MigrationScenario {
    /// The same migration of a PostgreSQL schema of `n` quakes (in a fresh schema of
    /// `postgresBase`'s server), against the SQLite store's migration of the same rows, medians
    /// of 3. The schema migrates inside the server, into a scratch schema (docs/PostgreSQL.md).
    static func runPostgreSQL(postgresBase: URLComponents, n: Int) async throws -> Result {
        var ours: [Double] = [], sqlite: [Double] = []
        for _ in 0..<3 {
            let schema = "ocd_bench_m_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            var components = postgresBase
            components.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "tls", value: "disable")]   // plaintext, as earlier figures
            let url = components.url!
            try fill(url, type: .postgreSQL, n: n)
            ours.append(try measure {
                let container = try openWithVersion2(url, type: .postgreSQL)
                for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
            })
            try await PostgreSQLScenario.dropSchema(schema, components: postgresBase)
            let file = scratchFile("migrate.sqlite")
            try fill(file, n: n)
            sqlite.append(try measure { _ = try openWithVersion2(file) })
        }
        let oursMS = median(ours)
        return Result(scenario: "PostgreSQL: migrate N rows (rename + new mandatory attribute)", n: n, ours: oursMS, raw: nil, grdb: nil,
                      extra: ["sqlite_store_ms": median(sqlite), "ours_rows_per_s": Double(n) / oursMS * 1000])
    }
}
#endif
