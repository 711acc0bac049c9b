import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import OpenCoreDataSQL
import Testing
import TestSupport

/// Lightweight migration of a PostgreSQL schema: Apple's fixture stores, moved into PostgreSQL
/// with the model that wrote them and opened with a later version, end up exactly as the SQLite
/// store migrates them; history, key counters and the store's UUID come along; saves of a
/// coordinator that has the schema open are either in the migrated store or refused, never lost;
/// a migration that fails changes nothing.
@Suite(.dedicatedThread) struct PostgreSQLMigrationTests {

    /// The store at `url` (added to no other coordinator) as a container of `model`, migrated on
    /// the way when it needs it.
    static func open(_ url: URL, model: ManagedObjectModel, history: Bool = false) throws -> PersistentContainer {
        try PersistentContainer.loaded(at: url, model: model) { description in
            description.type = PostgreSQLStoreType
            if history { description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey) }
        }
    }

    /// Every object of the container's store, a line each: entity, URI, and each attribute and
    /// relationship (destinations by URI, in order for ordered ones).
    static func graph(_ container: PersistentContainer) throws -> [String] {
        let context = container.viewContext
        func uri(_ object: ManagedObject) -> String { object.objectID.uriRepresentation().absoluteString }
        return try context.performAndWait {
            var lines: [String] = []
            for entity in container.managedObjectModel.entities.sorted(by: { $0.name < $1.name }) where !entity.isAbstract {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.includesSubentities = false
                for object in try context.fetch(request).sorted(by: { uri($0) < uri($1) }) {
                    var line = entity.name + " " + uri(object)
                    for (name, property) in entity.propertiesByName.sorted(by: { $0.key < $1.key }) where !property.isTransient {
                        let value: String = switch object.value(forKey: name) {
                        case let member as ManagedObject: uri(member)
                        case let members as [ManagedObject]: members.map(uri).joined(separator: ",")
                        case let members as Set<ManagedObject>: members.map(uri).sorted().joined(separator: ",")
                        case let other?: String(describing: other)
                        case nil: "nil"
                        }
                        line += " \(name)=\(value)"
                    }
                    lines.append(line)
                }
            }
            return lines
        }
    }

    static let fixtureSteps: [(store: String, bundle: String, version: String)] = [
        ("objcio-moody/Migrations/MigrationsTests/Moody.moody", MigrationTests.moody, "Moody 2"),
        ("objcio-moody/Migrations/MigrationsTests/Moody 3.moody", MigrationTests.moody, "Moody 4"),
        ("ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V1.sqlite", MigrationTests.bookmarks, "BookmarksModel 6"),
        ("ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite", MigrationTests.bookmarks, "BookmarksModel 4"),
        ("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", "SampleModel2"),
    ]

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"), arguments: fixtureSteps)
    func appleStoresMigrateAsTheSQLiteStoreMigratesThem(store: String, bundle: String, version: String) throws {
        let directory = TemporaryDirectory()
        let model = try ManagedObjectModel(contentsOf: Fixtures.url(bundle), version: version)
        let expected = try Self.graph(try MigrationTests.open(store, bundle: bundle, version: version, in: directory).container)
        #expect(!expected.isEmpty)

        // The fixture, as written, moved into a schema with the model that wrote it.
        let url = try directory.postgreSQLSchema()
        let sourceDirectory = TemporaryDirectory()
        let file = try Fixtures.copy(store, into: sourceDirectory)
        let original = try PersistentContainer.loaded(at: file, model: try ManagedObjectModel(cachedInStoreAt: file))
        let coordinator = original.persistentStoreCoordinator
        let moved = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: url, type: .postgreSQL)
        try coordinator.remove(moved)

        let migrated = try Self.open(url, model: model)
        let found = try Self.graph(migrated)
        #expect(found.count == expected.count)
        // Line by line, so that a failure shows the objects that differ (with the expected line).
        let differing = zip(found, expected).filter { $0 != $1 }.map { "\($0)\n  expected \($1)" }
        #expect(differing.isEmpty, "\(differing.count) objects differ, first: \(differing.first ?? "")")
        let metadata = try #require(migrated.persistentStoreCoordinator.persistentStores.first?.metadata)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == model.entityVersionHashesByName)
        #expect(try ManagedObjectModel(cachedInPostgreSQLStoreAt: url).entityVersionHashesByName == model.entityVersionHashesByName, "the schema carries the new model")
    }

    // MARK: - A model of our own

    private static func model(_ version: Int, mandatoryRank: Bool = false) -> ManagedObjectModel {
        var properties: [PropertyDescription] = [AttributeDescription(name: "title", type: .string)]
        if version > 1 { properties.append(AttributeDescription(name: "pinned", type: .boolean, isOptional: false, defaultValue: false)) }
        if mandatoryRank { properties.append(AttributeDescription(name: "rank", type: .integer64, isOptional: false)) }
        return ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: properties)])
    }

    private static func titles(_ container: PersistentContainer) throws -> [String] {
        let context = container.viewContext
        return try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            return try context.fetch(request).compactMap { $0.value(forKey: "title") as? String }
        }
    }

    private static func insert(_ titles: [String], into container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for title in titles {
                ManagedObject(entity: container.managedObjectModel.entitiesByName["Note"]!, insertInto: context).setValue(title, forKey: "title")
                try context.save()
            }
        }
    }

    /// A schema of `directory` holding notes with `titles`, written with the first model version.
    private static func notes(_ titles: [String], in directory: TemporaryDirectory, history: Bool = false) throws -> (url: URL, container: PersistentContainer) {
        let url = try directory.postgreSQLSchema()
        let container = try open(url, model: model(1), history: history)
        try insert(titles, into: container)
        return (url, container)
    }

    /// Whether the migration of the store at `url` left its scratch schema behind.
    private static func scratchSchemaIsLeft(by url: URL) throws -> Bool {
        let store = try PostgreSQLStoreURL(url)
        let session = try PostgreSQLSession.connect(store)
        defer { session.close() }
        let prefix = ManagedValue.string(PostgreSQLMigration.scratchPrefix(of: store))
        return try !session.execute("SELECT 1 FROM pg_namespace WHERE starts_with(nspname, \(bind: prefix))" as SQLFragment).rows.isEmpty
    }

    /// Core Data's check before migrating: the schema's metadata, read without adding the store,
    /// against the model (`metadataForPersistentStore` then `isConfiguration(withName:compatibleWithStoreMetadata:)`).
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func theMetadataIsReadWithoutAddingTheStore() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a"], in: directory)
        let uuid = try #require(old.persistentStoreCoordinator.persistentStores.first?.identifier)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: PostgreSQLStoreType, at: url)
        #expect(metadata["NSStoreUUID"] as? String == uuid)
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: Data] == Self.model(1).entityVersionHashesByName)
        #expect(Self.model(1).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!Self.model(2).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let error = try #require(throws: CoreDataError.self) {
            try PersistentStoreCoordinator.metadataForPersistentStore(type: .postgreSQL, at: try TestPostgreSQL.storeURL(schema: directory.schemaName + "_none"))
        }
        #expect(error.code == .persistentStoreOpen)
    }

    /// A migration killed on the way leaves its scratch schema, tables and all. The next one drops
    /// it before it starts and migrates at once: it used to drop it inside its own transaction,
    /// whose uncommitted DROP locked the scratch store's connections out until the statement
    /// timeout (found by `Reliability/run --postgres`, kill -9 during a migration).
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aScratchSchemaAKilledMigrationLeftIsDroppedFirst() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b"], in: directory)
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])
        let store = try PostgreSQLStoreURL(url)
        let session = try PostgreSQLSession.connect(store)
        defer { session.close() }
        let left = PostgreSQLMigration.scratchPrefix(of: store)
        try session.execute(text: "CREATE SCHEMA \(left)")
        try session.execute(text: "CREATE TABLE \(left).Z_METADATA (Z_VERSION integer, Z_UUID text, Z_PLIST bytea)")
        try session.execute(text: "INSERT INTO \(left).Z_METADATA VALUES (1, 'left', NULL)")
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "statement_timeout", value: "3")]
        let migrated = try Self.open(try #require(components.url), model: Self.model(2))
        #expect(try Self.titles(migrated) == ["a", "b"])
        #expect(try !Self.scratchSchemaIsLeft(by: url))
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aTableLargerThanOneStraightCopyMigratesWhole() throws {
        // More rows than one `INSERT … SELECT` copies (100,000): the copy goes by key ranges, each
        // well inside the statement timeout; none is left out or copied twice.
        let directory = TemporaryDirectory()
        let url = try directory.postgreSQLSchema()
        let count = 100_000 + 1_234
        do {
            let old = try Self.open(url, model: Self.model(1))
            let context = old.newBackgroundContext()
            let entity = try #require(old.managedObjectModel.entitiesByName["Note"])
            try context.performAndWait { () throws in
                _ = try context.execute(BatchInsertRequest(entity: entity, objects: (0..<count).map { ["title": "note \($0)"] }))
            }
            try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])
        }
        let new = try Self.open(url, model: Self.model(2))
        let context = new.viewContext
        let (total, pinned, titles) = try context.performAndWait { () throws -> (Int, Int, Set<String>) in
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            return (all.count, all.filter { $0.value(forKey: "pinned") as? Bool == false }.count,
                    Set(all.compactMap { $0.value(forKey: "title") as? String }))
        }
        #expect(total == count)
        #expect(pinned == count)
        #expect(titles.count == count && titles.contains("note 0") && titles.contains("note \(count - 1)"))
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func historyTokensKeysAndTheUUIDSurviveTheMigration() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b", "c"], in: directory, history: true)
        let context = old.viewContext
        let token = try context.performAndWait { () throws -> PersistentHistoryToken? in
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = NSPredicate(format: "title == %@", "c")
            for object in try context.fetch(request) { context.delete(object) }
            try context.save()
            return try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.first?.token
        }
        let identifier = old.persistentStoreCoordinator.persistentStores[0].identifier
        let uris = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).map { $0.objectID.uriRepresentation() } }
        func history(_ container: PersistentContainer) throws -> [String] {
            let context = container.viewContext
            return try context.performAndWait {
                try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions.map { transaction in
                    "\(transaction.transactionNumber): " + (transaction.changes ?? []).map { "\($0.changeType) \($0.changedObjectID.uriRepresentation().lastPathComponent)" }.joined(separator: ", ")
                }
            }
        }
        let before = try history(old)
        #expect(before.count == 3, "b, c and the deletion of c after the first save")
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])

        let new = try Self.open(url, model: Self.model(2), history: true)
        #expect(new.persistentStoreCoordinator.persistentStores[0].identifier == identifier)
        #expect(try history(new) == before, "a token taken before the migration reads the same changes")
        try new.viewContext.performAndWait { () throws in
            for uri in uris {
                let id = try #require(new.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
                #expect(try new.viewContext.existingObject(with: id).value(forKey: "pinned") as? Bool == false)
            }
        }
        // A new object takes a key after the deleted c's (3), and a history number after the
        // copied ones (a, b, c, the deletion: 1–4).
        try Self.insert(["d"], into: new)
        let after = try history(new)
        #expect(after.dropLast() == before[...])
        #expect(after.last?.hasPrefix("5: ") == true, "\(after.last ?? "")")
        #expect(after.last?.hasSuffix(" p4") == true, "\(after.last ?? "")")
        #expect(try !Self.scratchSchemaIsLeft(by: url))
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func savesOfACoordinatorThatHasTheSchemaOpenAreKeptOrRefused() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b", "c"], in: directory)
        // Another coordinator keeps saving, one note a save, while the schema is migrated.
        let acknowledged = Locked<[String]>([])
        let refusal = Locked<CoreDataError?>(nil)
        let done = DispatchSemaphore(value: 0)
        let writer = old.newBackgroundContext()
        writer.perform {
            for index in 0..<100_000 {
                let title = String(format: "w%06d", index)
                ManagedObject(entity: old.managedObjectModel.entitiesByName["Note"]!, insertInto: writer).setValue(title, forKey: "title")
                do {
                    try writer.save()
                    acknowledged.withLock { $0.append(title) }
                } catch let error as CoreDataError {
                    refusal.withLock { $0 = error }
                    break
                } catch {
                    break
                }
            }
            done.signal()
        }
        while acknowledged.withLock({ $0.count }) < 20 { Thread.sleep(forTimeInterval: 0.01) }
        let new = try Self.open(url, model: Self.model(2))
        done.waitOrRecord(seconds: 60)
        let error = try #require(refusal.withLock { $0 })
        #expect(error.code == .persistentStoreIncompatibleVersionHash)
        #expect(error.message.contains("migrated"))
        // Every acknowledged save is in the migrated schema, once; nothing else is.
        let saved = acknowledged.withLock { $0 }
        #expect(try Self.titles(new) == ["a", "b", "c"] + saved)
        #expect(try !Self.scratchSchemaIsLeft(by: url))
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aMigrationThatFailsLeavesTheSchemaAsItWas() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b"], in: directory)
        let hashes = old.persistentStoreCoordinator.persistentStores[0].metadata["NSStoreModelVersionHashes"] as? [String: Data]
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])

        // A new mandatory attribute without a default value: the old notes have none.
        let error = try #require(throws: CoreDataError.self) { try Self.open(url, model: Self.model(2, mandatoryRank: true)) }
        #expect(error.code == .migration)
        #expect(error.message.contains("rank"))
        #expect(try !Self.scratchSchemaIsLeft(by: url))
        // Without the migration options, the store is refused as before.
        let refused = try #require(throws: CoreDataError.self) {
            let container = PersistentContainer(name: "Test", managedObjectModel: Self.model(2))
            let description = PersistentStoreDescription(url: url, type: .postgreSQL)
            description.shouldMigrateStoreAutomatically = false
            container.persistentStoreDescriptions = [description]
            try container.loadPersistentStores()
        }
        #expect(refused.code == .persistentStoreIncompatibleVersionHash)
        // Staged migrations run on SQLite files: asked for here, they are refused, not ignored.
        let staged = try #require(throws: CoreDataError.self) {
            try PersistentContainer.loaded(at: url, model: Self.model(2)) { description in
                description.type = PostgreSQLStoreType
                description.setOption(StagedMigrationManager([LightweightMigrationStage([Self.model(1).versionChecksum, Self.model(2).versionChecksum])]),
                                      forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
            }
        }
        #expect(staged.code == .migration && staged.message.contains("SQLite files only"))
        let reopened = try Self.open(url, model: Self.model(1))
        #expect(reopened.persistentStoreCoordinator.persistentStores[0].metadata["NSStoreModelVersionHashes"] as? [String: Data] == hashes)
        #expect(try Self.titles(reopened) == ["a", "b"])
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func derivedCountsFollowTheirRelationshipAfterTheMigration() throws {
        let directory = TemporaryDirectory()
        func model(_ xml: String) throws -> ManagedObjectModel {
            let file = directory.file("contents-\(UUID().uuidString)")
            try Data(xml.utf8).write(to: file)
            return try ManagedObjectModel(contentsOf: file, version: nil)
        }
        let first = try model(DerivedAttributeTests.model)
        let second = try model(DerivedAttributeTests.model.replacingOccurrences(of: "<attribute name=\"title\"", with: "<attribute name=\"subtitle\" optional=\"YES\" attributeType=\"String\"/><attribute name=\"title\""))
        let url = try directory.postgreSQLSchema()
        let old = try Self.open(url, model: first)
        let context = old.newBackgroundContext()
        try context.performAndWait { () throws in
            let book = ManagedObject(entity: first.entitiesByName["Book"]!, insertInto: context)
            book.setValue("first", forKey: "title")
            for number in 0..<3 {
                let page = ManagedObject(entity: first.entitiesByName["Page"]!, insertInto: context)
                page.setValue(Int32(number), forKey: "number")
                page.setValue(book, forKey: "book")
            }
            try context.save()
        }
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])

        let new = try Self.open(url, model: second)
        func count() throws -> Int64? {
            let reader = new.newBackgroundContext()
            return try reader.performAndWait { try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book")).first?.value(forKey: "pagesCount") as? Int64 }
        }
        #expect(try count() == 3)
        // The schema's triggers (made again for the moved tables) follow a batch delete.
        let writer = new.newBackgroundContext()
        try writer.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "Page")
            request.predicate = NSPredicate(format: "number >= 1")
            _ = try writer.execute(BatchDeleteRequest(fetchRequest: request))
        }
        #expect(try count() == 1)
        #expect(try !Self.scratchSchemaIsLeft(by: url))
    }

    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func coordinatorsThatMigrateAtOnceMigrateOnce() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b", "c"], in: directory)
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])
        // Four coordinators add the store with the new model at the same moment: one migrates,
        // the others wait for it and open the migrated schema.
        let opened = Locked<[Result<[String], any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { try Self.titles(try Self.open(url, model: Self.model(2))) }
            opened.withLock { $0.append(result) }
        }
        for result in opened.withLock({ $0 }) {
            #expect(try result.get() == ["a", "b", "c"])
        }
        #expect(try !Self.scratchSchemaIsLeft(by: url))
    }

    /// A mapping model whose entity mapping filters its source objects (Xcode's filter predicate)
    /// cannot be followed in SQL, where every row is copied: opening the schema with it is refused
    /// saying so, and the schema stays at its version with every note.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aMappingThatFiltersItsSourceObjectsIsRefusedAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let (url, old) = try Self.notes(["a", "b"], in: directory)
        try old.persistentStoreCoordinator.remove(old.persistentStoreCoordinator.persistentStores[0])
        let filter = #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "title == 'a'"), $manager.sourceContext, NO)"#
        let mapping = MappingModel(name: "V1toV2", sourceModel: Self.model(1), destinationModel: Self.model(2), entityMappings: [
            MappingModel.EntityMapping(sourceEntityName: "Note", destinationEntityName: "Note", sourceExpression: filter),
        ])
        let error = try #require(throws: CoreDataError.self) {
            try PersistentContainer.loaded(at: url, model: Self.model(2)) { description in
                description.type = PostgreSQLStoreType
                description.setOption([mapping], forKey: MappingModelsOption)
            }
        }
        #expect(error.code == .migrationMissingMappingModel)
        #expect(error.message.contains("does not filter"))
        #expect(try Self.titles(try Self.open(url, model: Self.model(1))) == ["a", "b"])
    }
}
