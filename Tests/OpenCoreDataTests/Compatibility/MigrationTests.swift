import Foundation
import OpenCoreData
import Testing

/// Lightweight migration on open: the fixture chains (Moody, DuckDuckGo's bookmarks,
/// CoreDataPlus's sample models, BookMigration) migrate from each stored version to the next
/// and to the latest, with their data.
@Suite struct MigrationTests {
    static let fixtures = CoreDataFixtureTests.fixtures

    /// Opens `store` (copied) with `version` of `bundle`; returns the container and the copy's URL.
    static func open(_ store: String, bundle: String, version: String, in directory: TemporaryDirectory,
                     configure: (PersistentStoreDescription) -> Void = { _ in }) throws -> (container: PersistentContainer, url: URL) {
        let url = try CoreDataFixtureTests.copy(store, into: directory)
        let model = try ManagedObjectModel(contentsOf: fixtures.appendingPathComponent(bundle), version: version)
        let container = PersistentContainer(name: "Migrated", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        configure(description)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return (container, url)
    }

    /// Rows of a query against the fixture as shipped (read-only, through a copy).
    static func original(_ store: String, _ sql: String) throws -> [[Any?]] {
        let directory = TemporaryDirectory()
        return try RawSQLite(try CoreDataFixtureTests.copy(store, into: directory)).rows(sql)
    }

    static func objects(_ entity: String, in container: PersistentContainer, sortedBy key: String? = nil) throws -> [ManagedObject] {
        let context = container.viewContext
        return try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: entity)
            if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
            return try context.fetch(request)
        }
    }

    /// The store key of an object (the number in its URI, `p38`).
    static func key(_ object: ManagedObject) -> Int {
        Int(object.objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? 0
    }

    // MARK: - Moody

    static let moody = "objcio-moody/Migrations/Migrations/Moody.xcdatamodeld"

    @Test func moodyOneToTwoRenamesAndAddsAMandatoryAttributeWithItsDefault() throws {
        let directory = TemporaryDirectory()
        let (container, url) = try Self.open("objcio-moody/Migrations/MigrationsTests/Moody.moody", bundle: Self.moody, version: "Moody 2", in: directory)
        let before = try Self.original("objcio-moody/Migrations/MigrationsTests/Moody.moody", "SELECT Z_PK, ZREMOTEIDENTIFIER FROM ZMOOD ORDER BY Z_PK")
        let moods = try Self.objects("Mood", in: container)
        #expect(moods.count == before.count)
        for (row, mood) in zip(before, moods.sorted { Self.key($0) < Self.key($1) }) {
            #expect(mood.objectID.uriRepresentation().lastPathComponent == "p\(row[0] as! Int64)", "keys are kept")
            #expect(mood.value(forKey: "remoteID") as? String == row[1] as? String, "renamed through renamingIdentifier")
            #expect(mood.value(forKey: "rating") as? Int16 == 0, "a new mandatory attribute takes its default")
        }
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == container.managedObjectModel.entityVersionHashesByName)
        #expect(metadata[NSStoreUUIDKey] as? String == (try Self.original("objcio-moody/Migrations/MigrationsTests/Moody.moody", "SELECT Z_UUID FROM Z_METADATA").first?.first as? String))
    }

    @Test func moodyThreeToFourMovesEntitiesOutOfTheirHierarchy() throws {
        let directory = TemporaryDirectory()
        let store = "objcio-moody/Migrations/MigrationsTests/Moody 3.moody"
        let (container, url) = try Self.open(store, bundle: Self.moody, version: "Moody 4", in: directory)
        let continents = try Self.original(store, "SELECT COUNT(*) FROM ZGEOGRAPHICREGION g JOIN Z_PRIMARYKEY k ON g.Z_ENT = k.Z_ENT WHERE k.Z_NAME = 'Continent'")[0][0] as! Int64
        let countries = try Self.original(store, "SELECT COUNT(*) FROM ZGEOGRAPHICREGION g JOIN Z_PRIMARYKEY k ON g.Z_ENT = k.Z_ENT WHERE k.Z_NAME = 'Country'")[0][0] as! Int64
        let moodsPerCountry = try Self.original(store, "SELECT c.ZNUMERICISO3166CODE, COUNT(m.Z_PK) FROM ZGEOGRAPHICREGION c JOIN ZMOOD m ON m.ZCOUNTRY = c.Z_PK GROUP BY c.Z_PK")
        #expect(try Self.objects("Continent", in: container).count == Int(continents))
        #expect(try Self.objects("Country", in: container).count == Int(countries))
        let db = try RawSQLite(url)
        #expect(try db.rows("SELECT name FROM sqlite_master WHERE name = 'ZGEOGRAPHICREGION'").isEmpty)
        for row in moodsPerCountry {
            let context = container.viewContext
            let count = try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "Mood")
                request.predicate = NSPredicate(format: "country.numericISO3166Code == %d", row[0] as! Int64)
                return try context.count(for: request)
            }
            #expect(count == Int(row[1] as! Int64))
        }
    }

    @Test(arguments: [("Moody.moody", "Moody 2"), ("Moody 2.moody", "Moody 3"), ("Moody 3.moody", "Moody 4"), ("Moody 4.moody", "Moody 5"), ("Moody 5.moody", "Moody 6"), ("Moody.moody", "Moody 6")])
    func moodyStepsKeepEveryMood(store: String, version: String) throws {
        let directory = TemporaryDirectory()
        let path = "objcio-moody/Migrations/MigrationsTests/" + store
        let (container, _) = try Self.open(path, bundle: Self.moody, version: version, in: directory)
        let before = try Self.original(path, "SELECT ZDATE, ZCOLORS FROM ZMOOD ORDER BY ZDATE")
        let moods = try Self.objects("Mood", in: container, sortedBy: "date")
        #expect(moods.map { ($0.value(forKey: "date") as? Date)?.timeIntervalSinceReferenceDate } == before.map { $0[0] as? Double })
        #expect(moods.map { $0.value(forKey: "colors") as? Data } == before.map { $0[1] as? Data })
    }
}
