import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Lightweight migration on open: the fixture chains (Moody, DuckDuckGo's bookmarks,
/// CoreDataPlus's sample models, BookMigration) migrate from each stored version to the next
/// and to the latest, with their data.
@Suite(.dedicatedThread) struct MigrationTests {

    /// Opens `store` (copied) with `version` of `bundle`; returns the container and the copy's URL.
    static func open(_ store: String, bundle: String, version: String, in directory: TemporaryDirectory,
                     configure: (PersistentStoreDescription) -> Void = { _ in }) throws -> (container: PersistentContainer, url: URL) {
        let url = try Fixtures.copy(store, into: directory)
        let model = try ManagedObjectModel(contentsOf: Fixtures.url(bundle), version: version)
        return (try PersistentContainer.loaded(at: url, model: model, configure: configure), url)
    }

    /// Rows of a query against the fixture as shipped (read-only, through a copy).
    static func original(_ store: String, _ sql: String) throws -> [[Any?]] {
        let directory = TemporaryDirectory()
        return try RawSQLite(try Fixtures.copy(store, into: directory)).rows(sql)
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

    // MARK: - DuckDuckGo's bookmarks

    static let bookmarks = "ddg-bsk/Sources/Bookmarks/BookmarksModel.xcdatamodeld"

    @Test(arguments: [(1, "BookmarksModel 2"), (2, "BookmarksModel 3"), (3, "BookmarksModel 4"), (4, "BookmarksModel 5"), (5, "BookmarksModel 6"), (1, "BookmarksModel 6")])
    func bookmarksKeepTheirTreeAndOrder(store: Int, version: String) throws {
        let directory = TemporaryDirectory()
        let path = "ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V\(store).sqlite"
        let (container, _) = try Self.open(path, bundle: Self.bookmarks, version: version, in: directory)
        let children = try Self.original(path, "SELECT p.ZUUID, c.ZUUID FROM ZBOOKMARKENTITY c JOIN ZBOOKMARKENTITY p ON c.ZPARENT = p.Z_PK ORDER BY p.ZUUID, c.Z_FOK_PARENT")
        let expected = Dictionary(grouping: children, by: { $0[0] as! String }).mapValues { $0.map { $0[1] as? String } }
        let all = try Self.objects("BookmarkEntity", in: container)
        #expect(all.count == (try Self.original(path, "SELECT COUNT(*) FROM ZBOOKMARKENTITY")[0][0] as! Int64).asInt)
        try container.viewContext.performAndWait {
            for folder in all where expected[folder.value(forKey: "uuid") as! String] != nil {
                let members = try #require(folder.value(forKey: "children") as? [ManagedObject])
                #expect(members.map { $0.value(forKey: "uuid") as? String } == expected[folder.value(forKey: "uuid") as! String], "children keep their order")
            }
        }
    }

    @Test func aToOneBecomesAManyToManyWithItsOrder() throws {
        // Version 4 turned favoriteFolder (to-one) into favoriteFolders (to-many, renamed), so
        // favorites became an ordered many-to-many in a join table.
        let directory = TemporaryDirectory()
        let path = "ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite"
        let favorites = try Self.original(path, "SELECT f.ZUUID, b.ZUUID FROM ZBOOKMARKENTITY b JOIN ZBOOKMARKENTITY f ON b.ZFAVORITEFOLDER = f.Z_PK ORDER BY f.ZUUID, b.Z_FOK_FAVORITEFOLDER")
        #expect(!favorites.isEmpty)
        let (container, url) = try Self.open(path, bundle: Self.bookmarks, version: "BookmarksModel 4", in: directory)
        let expected = Dictionary(grouping: favorites, by: { $0[0] as! String }).mapValues { $0.map { $0[1] as? String } }
        try container.viewContext.performAndWait {
            for folder in try Self.objects("BookmarkEntity", in: container) {
                let uuid = folder.value(forKey: "uuid") as! String
                let members = try #require(folder.value(forKey: "favorites") as? [ManagedObject])
                #expect(members.map { $0.value(forKey: "uuid") as? String } == expected[uuid] ?? [], "\(uuid)")
                for member in members {
                    let folders = try #require(member.value(forKey: "favoriteFolders") as? Set<ManagedObject>)
                    #expect(folders.contains(folder))
                }
            }
        }
        #expect(try RawSQLite(url).rows("SELECT COUNT(*) FROM Z_1FAVORITES")[0][0] as? Int64 == Int64(favorites.count))
    }

    // MARK: - CoreDataPlus

    @Test func aRenamedSubentityKeepsItsRows() throws {
        // SampleModel 2 renames ExpensiveSportCar to LuxuryCar, drops and adds attributes; Apple
        // migrated the same store into SampleModel_V2.sqlite, which is what we must get.
        let directory = TemporaryDirectory()
        let (container, _) = try Self.open("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
                                           bundle: "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", version: "SampleModel2", in: directory)
        let apple = "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite"
        for (entity, number) in [("Car", 1), ("SportCar", 2), ("LuxuryCar", 3)] {
            let request = FetchRequest<ManagedObject>(entityName: entity)
            request.includesSubentities = false
            request.sortDescriptors = [NSSortDescriptor(key: "numberPlate", ascending: true)]
            let ours = try container.viewContext.performAndWait { try container.viewContext.fetch(request) }
            let theirs = try Self.original(apple, "SELECT ZNUMBERPLATE, ZMAKER, ZMODEL FROM ZCAR WHERE Z_ENT = \(number) ORDER BY ZNUMBERPLATE")
            let limited = try Self.original("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", "SELECT ZISLIMITEDEDITION FROM ZCAR WHERE Z_ENT = 3 ORDER BY ZNUMBERPLATE").map { ($0[0] as? Int64).map { $0 != 0 } }
            let owners = try Self.original(apple, "SELECT p.ZFIRSTNAME FROM ZCAR c LEFT JOIN ZPERSON p ON c.ZOWNER = p.Z_PK WHERE c.Z_ENT = \(number) ORDER BY c.ZNUMBERPLATE").map { $0[0] as? String }
            #expect(ours.count == theirs.count, "\(entity)")
            container.viewContext.performAndWait {
                #expect(ours.map { $0.value(forKey: "numberPlate") as? String } == theirs.map { $0[0] as? String })
                #expect(ours.map { $0.value(forKey: "maker") as? String } == theirs.map { $0[1] as? String })
                #expect(ours.map { ($0.value(forKey: "owner") as? ManagedObject)?.value(forKey: "firstName") as? String } == owners)
                if entity == "LuxuryCar" { #expect(ours.map { $0.value(forKey: "isLimitedEdition") as? Bool } == limited, "kept from ExpensiveSportCar") }
            }
        }
    }

    @Test(arguments: ["SampleModel3_v2", "SampleModel3_v3"])
    func anAddedEntityAndARemovedAttribute(version: String) throws {
        let directory = TemporaryDirectory()
        let path = "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"
        let (container, _) = try Self.open(path, bundle: "coredataplus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld", version: version, in: directory)
        let users = try Self.objects("User", in: container, sortedBy: "name")
        let expected = try Self.original(path, "SELECT ZNAME FROM ZUSER ORDER BY ZNAME").map { $0[0] as? String }
        #expect(container.viewContext.performAndWait { users.map { $0.value(forKey: "name") as? String } } == expected)
        #expect(try Self.objects("Pet", in: container).isEmpty)
    }

    // MARK: - Stores without a model, failures

    @Test func aStoreWithoutACacheMigratesFromTheVersionsGiven() throws {
        let directory = TemporaryDirectory()
        let bundle = Fixtures.url("bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld")
        let path = "bookmigration-mhw/BookMigration-master/BookMigration/Model1.sqlite"
        let versions = try ManagedObjectModel.versions(contentsOf: bundle)
        #expect(versions.count == 3)
        // Without the older versions there is nothing to migrate from.
        let error = try #require(throws: CoreDataError.self) {
            _ = try Self.open(path, bundle: "bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld", version: "Model2", in: TemporaryDirectory())
        }
        #expect(error.code == .migrationMissingSourceModel)
        let (container, _) = try Self.open(path, bundle: "bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld", version: "Model2", in: directory) {
            $0.setOption(versions, forKey: MigrationSourceModelsOption)
        }
        let books = try Self.objects("Book", in: container, sortedBy: "title")
        let expected = try Self.original(path, "SELECT ZTITLE FROM ZBOOK ORDER BY ZTITLE").map { $0[0] as? String }
        #expect(container.viewContext.performAndWait { books.map { $0.value(forKey: "title") as? String } } == expected)

        // The migrated store carries its model now, and goes on to version 3 without help.
        let url = directory.file("Model1.sqlite")
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        #expect(try ManagedObjectModel(cachedInStoreAt: url).entityVersionHashesByName == container.managedObjectModel.entityVersionHashesByName)
        let third = try PersistentContainer.loaded(at: url, model: try ManagedObjectModel(contentsOf: bundle, version: "Model3"))
        let again = try Self.objects("Book", in: third, sortedBy: "title")
        #expect(third.viewContext.performAndWait { again.map { $0.value(forKey: "title") as? String } } == expected)
        #expect(try Self.objects("User", in: third).count == 3)
    }

    @Test func aMandatoryAttributeWithoutDefaultFailsAndLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Notes.sqlite")
        func model(extra: Bool) -> ManagedObjectModel {
            var properties: [PropertyDescription] = [AttributeDescription(name: "title", type: .string)]
            if extra { properties.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false)) }
            return ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: properties)])
        }
        let first = try PersistentContainer.loaded(at: url, model: model(extra: false))
        try first.viewContext.performAndWait {
            let note = ManagedObject(entity: first.managedObjectModel.entitiesByName["Note"]!, insertInto: first.viewContext)
            note.setValue("kept", forKey: "title")
            try first.viewContext.save()
        }
        try first.persistentStoreCoordinator.remove(first.persistentStoreCoordinator.persistentStores[0])
        let before = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)["NSStoreModelVersionHashes"] as? [String: Data]

        let error = try #require(throws: CoreDataError.self) { try PersistentContainer.loaded(at: url, model: model(extra: true)) }
        #expect(error.code == .migration)
        #expect(error.message.contains("Note.rank"))
        #expect(try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)["NSStoreModelVersionHashes"] as? [String: Data] == before)
        #expect(try RawSQLite(url).rows("SELECT ZTITLE FROM ZNOTE").map { $0[0] as? String } == ["kept"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }.isEmpty)

        // With migration turned off the store is refused instead (134100).
        #expect(throws: CoreDataError.self) {
            try PersistentContainer.loaded(at: url, model: model(extra: true)) { $0.shouldMigrateStoreAutomatically = false }
        }
    }

    /// Notes with a code; in the second version the code is unique.
    static func codeModel(unique: Bool) -> ManagedObjectModel {
        let entity = EntityDescription(name: "Note", properties: [AttributeDescription(name: "code", type: .string)])
        if unique { entity.uniquenessConstraints = [["code"]] }
        return ManagedObjectModel(entities: [entity])
    }

    /// A store of the first version holding notes with these codes.
    static func notesWithCodes(_ codes: [String], at url: URL) throws {
        let first = try PersistentContainer.loaded(at: url, model: codeModel(unique: false))
        try first.viewContext.performAndWait {
            for code in codes {
                ManagedObject(entity: first.managedObjectModel.entitiesByName["Note"]!, insertInto: first.viewContext).setValue(code, forKey: "code")
            }
            try first.viewContext.save()
        }
        try first.persistentStoreCoordinator.remove(first.persistentStoreCoordinator.persistentStores[0])
    }

    @Test func aNewUniquenessConstraintIsMadeOnTheMigratedRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Notes.sqlite")
        try Self.notesWithCodes(["a", "b", "c"], at: url)
        let unique = Self.codeModel(unique: true)
        let container = try PersistentContainer.loaded(at: url, model: unique)
        #expect(try RawSQLite(url).rows("SELECT ZCODE FROM ZNOTE ORDER BY Z_PK").map { $0[0] as? String } == ["a", "b", "c"])
        let indexes = try RawSQLite(url).rows("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZNOTE'").compactMap { $0[0] as? String }
        #expect(indexes.contains { $0.contains("UNIQUE") && $0.contains("ZCODE") }, "the constraint's index is in the store: \(indexes)")
        // The constraint holds from now on: a second "a" replaces the first (the default policy
        // reports it instead).
        let context = container.viewContext
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            ManagedObject(entity: unique.entitiesByName["Note"]!, insertInto: context).setValue("a", forKey: "code")
            try context.save()
        }
        #expect(try RawSQLite(url).rows("SELECT COUNT(*) FROM ZNOTE WHERE ZCODE = 'a'")[0][0] as? Int64 == 1)
    }

    @Test func aNewUniquenessConstraintTheRowsBreakFailsAndLeavesTheStoreAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Notes.sqlite")
        try Self.notesWithCodes(["a", "b", "a"], at: url)
        let unique = Self.codeModel(unique: true)
        let before = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)["NSStoreModelVersionHashes"] as? [String: Data]

        let error = try #require(throws: CoreDataError.self) { try PersistentContainer.loaded(at: url, model: unique) }
        #expect(error.code == .migration)
        #expect(error.message.contains("uniqueness constraint") && error.message.contains("ZNOTE"), "\(error.message)")
        #expect(try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)["NSStoreModelVersionHashes"] as? [String: Data] == before)
        #expect(try RawSQLite(url).rows("SELECT ZCODE FROM ZNOTE ORDER BY Z_PK").map { $0[0] as? String } == ["a", "b", "a"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }.isEmpty)
    }

    @Test func progressIsReportedUpToEveryRow() throws {
        let directory = TemporaryDirectory()
        let reports = Locked<[MigrationProgress]>([])
        let handler: @Sendable (MigrationProgress) -> Void = { progress in reports.withLock { $0.append(progress) } }
        _ = try Self.open("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", bundle: "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld",
                          version: "SampleModel2", in: directory) { $0.setOption(handler, forKey: MigrationProgressHandlerOption) }
        let last = try #require(reports.withLock { $0.last })
        #expect(last.completedRows == 145)   // 125 cars and 20 people
        #expect(last.fractionCompleted == 1)
    }

    // MARK: - Mapping models

    static func mapping(_ name: String) throws -> MappingModel {
        try MappingModel(contentsOf: Fixtures.url("objcio-moody/Migrations/Migrations/\(name).xcmappingmodel"), models: Fixtures.url(moody))
    }

    @Test func aMappingModelsKeyPathFillsTheNewAttribute() throws {
        // Moody 4 → 5 drops Continent; the mapping model keeps each country's continent code in
        // isoContinent = $source.continent.numericISO3166Code.
        let mapping = try Self.mapping("Moody 4-Moody 5")
        #expect(mapping.entityMappings.first { $0.destinationEntityName == "Country" }?.valueExpressions["isoContinent"] == "$source.continent.numericISO3166Code")
        let path = "objcio-moody/Migrations/MigrationsTests/Moody 4.moody"
        let expected = try Self.original(path, "SELECT c.ZNUMERICISO3166CODE, k.ZNUMERICISO3166CODE FROM ZCOUNTRY c LEFT JOIN ZCONTINENT k ON c.ZCONTINENT = k.Z_PK ORDER BY c.ZNUMERICISO3166CODE")
        #expect(expected.contains { $0[1] != nil })
        let directory = TemporaryDirectory()
        let (container, _) = try Self.open(path, bundle: Self.moody, version: "Moody 5", in: directory) { $0.setOption([mapping], forKey: MappingModelsOption) }
        let countries = try Self.objects("Country", in: container, sortedBy: "numericISO3166Code")
        container.viewContext.performAndWait {
            #expect(countries.map { ($0.value(forKey: "isoContinent") as? Int16).map(Int64.init) } == expected.map { ($0[1] as? Int64) ?? 0 })
        }
        // Without it, inference leaves the default (0).
        let other = TemporaryDirectory()
        let (inferred, _) = try Self.open(path, bundle: Self.moody, version: "Moody 5", in: other)
        let plain = try Self.objects("Country", in: inferred)
        inferred.viewContext.performAndWait { #expect(plain.allSatisfy { $0.value(forKey: "isoContinent") as? Int16 == 0 }) }
    }

    // MARK: - Changes made in code

    /// Saves objects with `fill` in a store of `old`, then opens it with `new` (migrating).
    static func migrate(from old: ManagedObjectModel, to new: ManagedObjectModel, in directory: TemporaryDirectory,
                        fill: (ManagedObjectContext, ManagedObjectModel) throws -> Void) throws -> PersistentContainer {
        let url = directory.file("Code.sqlite")
        let first = try PersistentContainer.loaded(at: url, model: old)
        try first.viewContext.performAndWait {
            try fill(first.viewContext, old)
            try first.viewContext.save()
        }
        try first.persistentStoreCoordinator.remove(first.persistentStoreCoordinator.persistentStores[0])
        return try PersistentContainer.loaded(at: url, model: new)
    }

    @Test func typeChangesConvertWhereTheMeaningIsKept() throws {
        func model(_ count: AttributeType, _ code: AttributeType, rankOptional: Bool) -> ManagedObjectModel {
            let rank = AttributeDescription(name: "rank", type: .integer32, isOptional: rankOptional, defaultValue: rankOptional ? nil : 7)
            return ManagedObjectModel(entities: [EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "count", type: count), AttributeDescription(name: "code", type: code), rank,
            ])])
        }
        let directory = TemporaryDirectory()
        let container = try Self.migrate(from: model(.integer16, .string, rankOptional: true), to: model(.string, .integer64, rankOptional: false), in: directory) { context, old in
            for (count, code, rank) in [(3, "42", 1), (5, "x", nil)] as [(Int16, String, Int32?)] {
                let item = ManagedObject(entity: old.entitiesByName["Item"]!, insertInto: context)
                item.setValue(count, forKey: "count")
                item.setValue(code, forKey: "code")
                item.setValue(rank, forKey: "rank")
            }
        }
        let items = try Self.objects("Item", in: container, sortedBy: "count")
        container.viewContext.performAndWait {
            #expect(items.map { $0.value(forKey: "count") as? String } == ["3", "5"])
            #expect(items.map { $0.value(forKey: "code") as? Int64 } == [42, nil], "a string that is no number becomes nil")
            #expect(items.map { $0.value(forKey: "rank") as? Int32 } == [1, 7], "optional to mandatory: nil takes the default")
        }
    }

    /// Doubles another program may have written (infinities, numbers past Int64) become nil when
    /// the attribute turns into an integer; the whole part of the others is kept. (SQLite has no
    /// NaN: it stores NULL, and saves refuse NaN.)
    @Test func doublesThatFitNoIntegerBecomeNilInsteadOfTrapping() throws {
        func model(_ type: AttributeType) -> ManagedObjectModel {
            ManagedObjectModel(entities: [EntityDescription(name: "Reading", properties: [
                AttributeDescription(name: "order", type: .integer16), AttributeDescription(name: "value", type: type),
            ])])
        }
        let values: [Double] = [3.7, -2.5, .infinity, -.infinity, 1e300, 9.3e18, 40_000]
        let directory = TemporaryDirectory()
        let container = try Self.migrate(from: model(.double), to: model(.integer16), in: directory) { context, old in
            for (order, value) in values.enumerated() {
                let reading = ManagedObject(entity: old.entitiesByName["Reading"]!, insertInto: context)
                reading.setValue(Int16(order), forKey: "order")
                reading.setValue(value, forKey: "value")
            }
        }
        let readings = try Self.objects("Reading", in: container, sortedBy: "order")
        container.viewContext.performAndWait {
            #expect(readings.map { $0.value(forKey: "value") as? Int16 } == [3, -2, nil, nil, nil, nil, nil])
        }
    }

    @Test func rootsThatJoinAHierarchyAreRenumberedAndTheirReferencesFollow() throws {
        // Dog and Cat were two roots; now both inherit from Animal and share ZANIMAL, so their
        // keys clash and are numbered anew; the owners' relationships must follow.
        func model(merged: Bool) -> ManagedObjectModel {
            let owner = EntityDescription(name: "Owner", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "dog", destination: "Dog", inverse: "owner"),
                RelationshipDescription(name: "cats", destination: "Cat", toMany: true, inverse: "owner"),
            ])
            let dog = EntityDescription(name: "Dog", properties: [AttributeDescription(name: "name", type: .string), RelationshipDescription(name: "owner", destination: "Owner", inverse: "dog")])
            let cat = EntityDescription(name: "Cat", properties: [AttributeDescription(name: "name", type: .string), RelationshipDescription(name: "owner", destination: "Owner", inverse: "cats")])
            guard merged else { return ManagedObjectModel(entities: [owner, dog, cat]) }
            let animal = EntityDescription(name: "Animal", properties: [AttributeDescription(name: "legs", type: .integer16, defaultValue: 4)])
            animal.isAbstract = true
            animal.subentities = [dog, cat]
            return ManagedObjectModel(entities: [owner, animal, dog, cat])
        }
        let directory = TemporaryDirectory()
        let container = try Self.migrate(from: model(merged: false), to: model(merged: true), in: directory) { context, old in
            for index in 1...3 {
                let owner = ManagedObject(entity: old.entitiesByName["Owner"]!, insertInto: context)
                owner.setValue("owner \(index)", forKey: "name")
                let dog = ManagedObject(entity: old.entitiesByName["Dog"]!, insertInto: context)
                dog.setValue("dog \(index)", forKey: "name")
                owner.setValue(dog, forKey: "dog")
                for kitten in 1...index {
                    let cat = ManagedObject(entity: old.entitiesByName["Cat"]!, insertInto: context)
                    cat.setValue("cat \(index).\(kitten)", forKey: "name")
                    cat.setValue(owner, forKey: "owner")
                }
            }
        }
        let owners = try Self.objects("Owner", in: container, sortedBy: "name")
        container.viewContext.performAndWait {
            for (index, owner) in owners.enumerated() {
                #expect((owner.value(forKey: "dog") as? ManagedObject)?.value(forKey: "name") as? String == "dog \(index + 1)")
                let cats = (owner.value(forKey: "cats") as? Set<ManagedObject> ?? []).compactMap { $0.value(forKey: "name") as? String }.sorted()
                #expect(cats == (1...(index + 1)).map { "cat \(index + 1).\($0)" })
            }
        }
        let animals = try Self.objects("Animal", in: container)
        #expect(animals.count == 9)
        #expect(Set(animals.map(\.objectID)).count == 9, "no two animals share a key")
        container.viewContext.performAndWait { #expect(animals.allSatisfy { $0.value(forKey: "legs") as? Int16 == 4 }) }
    }

    @Test func configurationsAreComparedWithStoreMetadata() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("coredataplus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory)
        let model = try ManagedObjectModel(cachedInStoreAt: url)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        #expect(model.configurations["SampleConfigurationV1"]?.count == 6)
        #expect(model.isConfiguration(withName: "SampleConfigurationV1", compatibleWithStoreMetadata: metadata))
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let other = try ManagedObjectModel(cachedInStoreAt: try Fixtures.copy("coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite", into: directory))
        #expect(!other.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func historyComesAlongWithTheObjectsItNames() throws {
        func model(_ extra: Bool) -> ManagedObjectModel {
            var properties: [PropertyDescription] = [AttributeDescription(name: "title", type: .string)]
            if extra { properties.append(AttributeDescription(name: "pinned", type: .boolean, isOptional: false, defaultValue: false)) }
            return ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: properties)])
        }
        let directory = TemporaryDirectory()
        let url = directory.file("History.sqlite")
        func open(_ extra: Bool) throws -> PersistentContainer {
            try PersistentContainer.loaded(at: url, model: model(extra)) { $0.setOption(true, forKey: NSPersistentHistoryTrackingKey) }
        }
        let first = try open(false)
        try first.viewContext.performAndWait {
            for round in 1...3 {
                let note = ManagedObject(entity: first.managedObjectModel.entitiesByName["Note"]!, insertInto: first.viewContext)
                note.setValue("note \(round)", forKey: "title")
                try first.viewContext.save()
            }
        }
        try first.persistentStoreCoordinator.remove(first.persistentStoreCoordinator.persistentStores[0])
        let second = try open(true)
        try second.viewContext.performAndWait {
            let history = try second.viewContext.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
            #expect(history.count == 3)
            let changed = history.compactMap { $0.changes?.first?.changedObjectID }
            #expect(changed.count == 3)
            for id in changed {
                let note = try second.viewContext.existingObject(with: id)
                #expect((note.value(forKey: "title") as? String)?.hasPrefix("note ") == true, "history names the migrated objects")
                #expect(note.value(forKey: "pinned") as? Bool == false)
            }
        }
    }
}

extension Int64 {
    var asInt: Int { Int(self) }
}
