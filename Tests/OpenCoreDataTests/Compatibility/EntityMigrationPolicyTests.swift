import Foundation
import OpenCoreData
import Testing
import TestSupport

/// objc.io's Moody 5 → 6 policy, ported as Core Data code is written: Moody 6 brings the
/// Continent entity back, and each country's continent is found or made from its code.
final class Country5ToCountry6Policy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let code = sInstance.value(forKey: "isoContinent") as? Int16 else { return }
        guard let country = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first,
              let context = country.managedObjectContext else { throw PolicyError.noCountry }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Continent")
        request.predicate = NSPredicate(format: "numericISO3166Code == %d", Int(code))
        let continent = try context.fetch(request).first ?? {
            let made = NSEntityDescription.insertNewObject(forEntityName: "Continent", into: context)
            made.setValue(code, forKey: "numericISO3166Code")
            return made
        }()
        country.setValue(continent, forKey: "continent")
    }

    enum PolicyError: Error { case noCountry }
}

/// CoreDataPlus's V2 → V3 policy: a car's maker name becomes a Maker object (one per name).
final class V2to3MakerPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let name = sInstance.value(forKey: "maker") as? String,
              let car = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first else { return }
        var makers = manager.userInfo?["makers"] as? [String: NSManagedObject] ?? [:]
        let maker = makers[name] ?? {
            let made = NSEntityDescription.insertNewObject(forEntityName: "Maker", into: manager.destinationContext)
            made.setValue(name, forKey: "name")
            return made
        }()
        makers[name] = maker
        manager.userInfo = ["makers": makers]
        car.setValue(maker, forKey: "createdBy")
    }
}

/// A policy that fails half way.
final class FailingPolicy: EntityMigrationPolicy {
    struct Refused: Error {}
    private var seen = 0
    override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {
        seen += 1
        if seen == 2 { throw Refused() }
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }
}

/// A policy that cancels the migration at its first object.
final class CancellingPolicy: EntityMigrationPolicy {
    struct Stop: Error, Equatable {}
    override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        manager.cancelMigrationWithError(Stop())
    }
}

/// Mapping models whose entity mappings name custom policies or call the migration manager's
/// functions: followed object by object, as Core Data's migration manager does.
@Suite(.dedicatedThread) struct EntityMigrationPolicyTests {
    static let moodyStore = "objcio-moody/Migrations/MigrationsTests/Moody 5.moody"
    static let samples = "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let sampleStore = "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite"

    static func sampleMapping() throws -> MappingModel {
        try MappingModel(contentsOf: Fixtures.url("coredataplus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel"), models: Fixtures.url(samples))
    }

    @Test func loadingAStoreRunsTheMappingsPolicy() throws {
        let mapping = try MigrationTests.mapping("Moody 5-Moody 6")
        #expect(mapping.entityMappings.map(\.name) == ["Continent", "CountryToCountry", "MoodToMood"])
        let countries = try MigrationTests.original(Self.moodyStore, "SELECT ZNUMERICISO3166CODE, ZISOCONTINENT FROM ZCOUNTRY ORDER BY ZNUMERICISO3166CODE")
        let moods = try MigrationTests.original(Self.moodyStore, "SELECT m.ZCREATORID, c.ZNUMERICISO3166CODE FROM ZMOOD m LEFT JOIN ZCOUNTRY c ON m.ZCOUNTRY = c.Z_PK ORDER BY m.ZCREATORID, m.ZDATE")
        let codes = Set(countries.compactMap { $0[1] as? Int64 })
        #expect(countries.count == 3 && codes.count == 2)
        let directory = TemporaryDirectory()
        let (container, url) = try MigrationTests.open(Self.moodyStore, bundle: MigrationTests.moody, version: "Moody 6", in: directory) {
            $0.setOption([mapping], forKey: MappingModelsOption)
            $0.setOption([Country5ToCountry6Policy.self], forKey: MigrationPolicyTypesOption)
        }
        let migrated = try MigrationTests.objects("Country", in: container, sortedBy: "numericISO3166Code")
        let continents = try MigrationTests.objects("Continent", in: container)
        let migratedMoods = try MigrationTests.objects("Mood", in: container, sortedBy: "creatorID")
        container.viewContext.performAndWait {
            #expect(migrated.map { ($0.value(forKey: "numericISO3166Code") as? Int16).map(Int64.init) } == countries.map { $0[0] as? Int64 })
            // One continent per code, each country linked to the one of its old code.
            #expect(continents.count == codes.count)
            #expect(migrated.map { ($0.value(forKey: "continent") as? ManagedObject)?.value(forKey: "numericISO3166Code") as? Int16 }
                    == countries.map { ($0[1] as? Int64).map { Int16($0) } })
            // Moods keep their countries (relationships inferred by name).
            #expect(migratedMoods.count == moods.count)
            #expect(Set(migratedMoods.map { ($0.value(forKey: "country") as? ManagedObject)?.value(forKey: "numericISO3166Code") as? Int16 })
                    == Set(moods.map { ($0[1] as? Int64).map { Int16($0) } }))
        }
        // The store is at version 6 and gets a new UUID (its objects have new keys).
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data]
                == (try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 6")).entityVersionHashesByName)
        let before = try MigrationTests.original(Self.moodyStore, "SELECT Z_UUID FROM Z_METADATA").first?.first as? String
        #expect(metadata["NSStoreUUID"] as? String != before)
    }

    /// SampleModel_V2's store migrated to SampleModel3 by `mapping` with `V2to3MakerPolicy`: its
    /// cars (by number plate) and makers, with the source's count of makers and its owners by plate.
    static func migratedSample(by mapping: MappingModel, in directory: TemporaryDirectory) throws
        -> (container: PersistentContainer, cars: [ManagedObject], makers: [ManagedObject], sourceMakers: Int64?, owned: [[Any?]]) {
        let sourceMakers = try MigrationTests.original(sampleStore, "SELECT COUNT(DISTINCT ZMAKER) FROM ZCAR").first?.first as? Int64
        let owned = try MigrationTests.original(sampleStore, "SELECT ZNUMBERPLATE, p.ZFIRSTNAME FROM ZCAR c JOIN ZPERSON p ON c.ZOWNER = p.Z_PK ORDER BY ZNUMBERPLATE")
        let (container, _) = try MigrationTests.open(sampleStore, bundle: samples, version: "SampleModel3", in: directory) {
            $0.setOption([mapping], forKey: MappingModelsOption)
            $0.setOption([V2to3MakerPolicy.self], forKey: MigrationPolicyTypesOption)
        }
        return (container, try MigrationTests.objects("Car", in: container, sortedBy: "numberPlate"), try MigrationTests.objects("Maker", in: container), sourceMakers, owned)
    }

    @Test func managerFunctionsInValueExpressionsAreFollowed() throws {
        let directory = TemporaryDirectory()
        let (container, cars, madeMakers, makers, owned) = try Self.migratedSample(by: try Self.sampleMapping(), in: directory)
        container.viewContext.performAndWait {
            #expect(cars.count == 125)
            #expect(Int64(madeMakers.count) == makers)
            #expect(cars.allSatisfy { ($0.value(forKey: "createdBy") as? ManagedObject)?.value(forKey: "name") != nil })
            // previousOwners = FUNCTION($manager, "destinationInstancesForEntityMappingNamed:…", "PersonToPerson", $source.owner)
            let withPrevious = cars.filter { !(($0.value(forKey: "previousOwners") as? Set<ManagedObject>) ?? []).isEmpty }
            #expect(withPrevious.count == owned.count)
            for car in withPrevious {
                let previous = car.value(forKey: "previousOwners") as? Set<ManagedObject> ?? []
                let plate = car.value(forKey: "numberPlate") as? String
                #expect(previous.map { $0.value(forKey: "firstName") as? String } == owned.filter { $0[0] as? String == plate }.map { $0[1] as? String })
                #expect(previous.first?.value(forKey: "cars") as? Set<ManagedObject> == Set([car]) || (previous.first?.value(forKey: "previousCars") as? Set<ManagedObject>)?.contains(car) == true)
            }
            // Sub-entities keep their entity (each has its own mapping).
            #expect(cars.filter { $0.entity.name == "LuxuryCar" }.count == 5)
        }
    }

    @Test func relationshipsMappedByKeyPathAndEntityMappingAreFollowed() throws {
        // Moody 2 → 3 gives each mood the continent of its country: in Xcode, the relationship
        // mapping's key path $source.country.continent through the mapping ContinentToContinent.
        let mapping = try MigrationTests.mapping("Moody 2-Moody 3")
        #expect(mapping.entityMappings.first { $0.name == "MoodToMood" }?.valueExpressions["continent"]
                == "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ContinentToContinent\", $source.country.continent)")
        let store = "objcio-moody/Migrations/MigrationsTests/Moody 2.moody"
        let expected = try MigrationTests.original(store, """
            SELECT c.ZNUMERICISO3166CODE, k.ZNUMERICISO3166CODE FROM ZMOOD m JOIN ZGEOGRAPHICREGION c ON m.ZCOUNTRY = c.Z_PK
            LEFT JOIN ZGEOGRAPHICREGION k ON c.ZCONTINENT = k.Z_PK ORDER BY 1, 2
            """).map { [$0[0] as? Int64, $0[1] as? Int64] }
        #expect(expected.count == 4 && expected.allSatisfy { $0[1] != nil })
        let directory = TemporaryDirectory()
        let (container, _) = try MigrationTests.open(store, bundle: MigrationTests.moody, version: "Moody 3", in: directory) {
            $0.setOption([mapping], forKey: MappingModelsOption)
        }
        let moods = try MigrationTests.objects("Mood", in: container)
        container.viewContext.performAndWait {
            let pairs = moods.map { mood -> [Int64?] in
                let code = { (key: String) in ((mood.value(forKey: key) as? ManagedObject)?.value(forKey: "numericISO3166Code") as? Int16).map(Int64.init) }
                return [code("country"), code("continent")]
            }
            #expect(pairs.sorted { ($0[0] ?? 0, $0[1] ?? 0) < ($1[0] ?? 0, $1[1] ?? 0) } == expected)
        }
    }

    @Test func aPolicyThatIsNotAtHandIsNamedAndTheStoreIsUnchanged() throws {
        let mapping = try MigrationTests.mapping("Moody 5-Moody 6")
        let directory = TemporaryDirectory()
        let error = try #require(throws: CoreDataError.self) {
            _ = try MigrationTests.open(Self.moodyStore, bundle: MigrationTests.moody, version: "Moody 6", in: directory) {
                $0.setOption([mapping], forKey: MappingModelsOption)
            }
        }
        #expect(error.code == .migrationMissingMappingModel)
        #expect(error.message.contains("Migrations.Country5ToCountry6Policy") && error.message.contains("MigrationPolicyTypesOption"))
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: directory.file("Moody 5.moody"))
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data]
                == (try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 5")).entityVersionHashesByName)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).allSatisfy { !$0.contains("migrating") })
    }

    @Test func aStoreOpenedWithItsOwnVersionIsNotMigratedFurther() throws {
        // A mapping model onward from the store's version, passed while the app still opens the
        // store with that version (an app that lists every mapping it has): nothing is migrated.
        let mapping = try MigrationTests.mapping("Moody 5-Moody 6")
        let directory = TemporaryDirectory()
        let (container, url) = try MigrationTests.open(Self.moodyStore, bundle: MigrationTests.moody, version: "Moody 5", in: directory) {
            $0.setOption([mapping], forKey: MappingModelsOption)
            $0.setOption([Country5ToCountry6Policy.self], forKey: MigrationPolicyTypesOption)
        }
        #expect(try MigrationTests.objects("Country", in: container).count == 3)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == mapping.sourceModel.entityVersionHashesByName)
    }

    @Test func aFailingPolicyLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy(Self.moodyStore, into: directory)
        let before = try RawSQLite(url).rows("SELECT Z_PK, ZNUMERICISO3166CODE, ZISOCONTINENT FROM ZCOUNTRY ORDER BY Z_PK")
        let v5 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 5")
        let v6 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 6")
        let mapping = MappingModel(name: "5 to 6", sourceModel: v5, destinationModel: v6, entityMappings: [
            .init(sourceEntityName: "Country", destinationEntityName: "Country", migrationPolicyClassName: "OpenCoreDataTests.FailingPolicy"),
        ])
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: url, model: v6) { $0.setOption([mapping], forKey: MappingModelsOption) }
        }
        // Found through the Swift runtime by its module-qualified name, and its error named.
        #expect(error.code == .migration)
        #expect(error.message.contains("FailingPolicy.createDestinationInstances") && error.message.contains("CountryToCountry"))
        #expect(try RawSQLite(url).rows("SELECT Z_PK, ZNUMERICISO3166CODE, ZISOCONTINENT FROM ZCOUNTRY ORDER BY Z_PK").map { $0.map { $0 as? Int64 } }
                == before.map { $0.map { $0 as? Int64 } })
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == v5.entityVersionHashesByName)
    }

    @Test func migrateStoreWritesAnotherFileAndLeavesTheSourceAlone() throws {
        let directory = TemporaryDirectory()
        let source = try Fixtures.copy(Self.moodyStore, into: directory)
        let destination = directory.file("Moody 6.sqlite")
        let mapping = try MigrationTests.mapping("Moody 5-Moody 6")
        let manager = NSMigrationManager(sourceModel: mapping.sourceModel, destinationModel: mapping.destinationModel)
        manager.policyTypes = [Country5ToCountry6Policy.self]
        try manager.migrateStore(from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
                                 toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        #expect(manager.migrationProgress == 1)
        let raw = try RawSQLite(destination)
        #expect(try raw.rows("SELECT COUNT(*) FROM ZCONTINENT").first?.first as? Int64 == 2)
        #expect(try raw.rows("SELECT COUNT(*) FROM ZCOUNTRY WHERE ZCONTINENT IS NOT NULL").first?.first as? Int64 == 3)
        #expect(try raw.rows("SELECT COUNT(*) FROM ZMOOD WHERE ZCOUNTRY IS NOT NULL").first?.first as? Int64 == 4)
        #expect(try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: source)["NSStoreModelVersionHashes"] as? [String: Data]
                == mapping.sourceModel.entityVersionHashesByName)
    }

    @Test func aCancelledMigrationThrowsItsErrorAndSavesNothing() throws {
        let directory = TemporaryDirectory()
        let source = try Fixtures.copy(Self.moodyStore, into: directory)
        let destination = directory.file("Cancelled.sqlite")
        let v5 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 5")
        let v6 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 6")
        let mapping = MappingModel(name: "5 to 6", sourceModel: v5, destinationModel: v6, entityMappings: [
            .init(sourceEntityName: "Country", destinationEntityName: "Country", migrationPolicyClassName: "CancellingPolicy"),
        ])
        let manager = MigrationManager(sourceModel: v5, destinationModel: v6)
        manager.policyTypes = [CancellingPolicy.self]
        #expect(throws: CancellingPolicy.Stop()) {
            try manager.migrateStore(from: source, mapping: mapping, to: destination)
        }
        #expect(manager.migrationProgress < 1)
        #expect(try RawSQLite(destination).rows("SELECT COUNT(*) FROM ZCOUNTRY").first?.first as? Int64 == 0)
    }

    @Test func valueExpressionsThatCannotBeFollowedAreRefusedNamingThem() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy(Self.moodyStore, into: directory)
        let v5 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 5")
        let v6 = try ManagedObjectModel(contentsOf: Fixtures.url(MigrationTests.moody), version: "Moody 6")
        for (expression, reason) in [("FUNCTION($source, \"uppercaseString\")", "other than $manager"),
                                     ("FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Country\", \"TRUEPREDICATE\")", "no function"),
                                     ("FUNCTION($entityPolicy, \"code:\", $source.isoContinent)", "override function"),
                                     ("FUNCTION($manager, ", "selector name in quotes")] {
            let mapping = MappingModel(name: "5 to 6", sourceModel: v5, destinationModel: v6, entityMappings: [
                .init(sourceEntityName: "Country", destinationEntityName: "Country", valueExpressions: ["uniquenessDummy": expression]),
            ])
            let error = try #require(throws: CoreDataError.self) {
                _ = try PersistentContainer.loaded(at: url, model: v6) { $0.setOption([mapping], forKey: MappingModelsOption) }
            }
            #expect(error.code == .migrationMissingMappingModel, "\(expression)")
            #expect(error.message.contains(reason) && error.message.contains("Country.uniquenessDummy"), "\(expression): \(error.message)")
        }
    }
}
