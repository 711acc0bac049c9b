import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Every store in the fixtures opens with the model it carries (or, without a cache, with its
/// model file), and every row of every entity materialises with all its properties.
@Suite(.dedicatedThread) struct FixtureStoreTests {
    static let stores = ReferenceDecoderTests.references.filter(\.isStore).map(\.fixture)

    /// Model1.sqlite (2013) has no cache; its model is the first version of the Xcode bundle.
    static func model(for store: URL, fixture: String) throws -> ManagedObjectModel {
        if fixture.hasSuffix("Model1.sqlite") {
            return try ManagedObjectModel(contentsOf: Fixtures.url("bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld"), version: "Model1")
        }
        return try ManagedObjectModel(cachedInStoreAt: store)
    }

    @Test(arguments: stores)
    func everyRowOfEveryEntityMaterialises(_ fixture: String) throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy(fixture, into: directory)
        let model = try Self.model(for: url, fixture: fixture)
        let container = try PersistentContainer.loaded(at: url, model: model)
        let db = try RawSQLite(url)
        let numbers = Dictionary(uniqueKeysWithValues: try db.rows("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY").map { ($0[0] as! String, $0[1] as! Int64) })
        let context = container.newBackgroundContext()
        var total = 0
        try context.performAndWait { () throws in
            for entity in model.entities {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.includesSubentities = false
                let objects = try context.fetch(request)
                let number = try #require(numbers[entity.name] ?? entity.renamingIdentifier.flatMap { numbers[$0] }, "\(entity.name)")
                let table = "Z" + entity.rootEntity.name.uppercased()
                let stored = try db.rows("SELECT COUNT(*) FROM \(table) WHERE Z_ENT = \(number)").first?.first as? Int64
                #expect(Int64(objects.count) == stored, "\(fixture): \(entity.name)")
                for object in objects {
                    #expect(object.entity === entity, "sub-entities come back as their own entity")
                    for property in entity.allProperties where !property.isTransient {
                        let value = object.value(forKey: property.name)
                        if let relationship = property as? RelationshipDescription, !relationship.isToMany, !relationship.isOptional {
                            #expect(value != nil, "\(fixture): \(entity.name).\(property.name)")
                        }
                    }
                }
                total += objects.count
            }
        }
        let rows = try model.entities.filter { $0.superentity == nil }.reduce(0) { sum, root in
            sum + Int(try db.rows("SELECT COUNT(*) FROM Z\(root.name.uppercased())").first?.first as? Int64 ?? 0)
        }
        #expect(total == rows, "\(fixture): every row materialised once")
    }

    @Test(arguments: stores)
    func aChangeSavesReopensAndKeepsTheLayout(_ fixture: String) throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy(fixture, into: directory)
        let model = try Self.model(for: url, fixture: fixture)
        let schema = { () throws -> [String] in
            try RawSQLite(url).rows("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").map { "\($0[0] ?? "") \($0[1] ?? "") \($0[2] ?? "")" }
        }
        let before = try schema()
        func open() throws -> PersistentContainer {
            return try Fixtures.open(url, model: model)
        }
        // The first object with an optional string attribute gets a new value.
        let container = try open()
        let context = container.newBackgroundContext()
        let changed: (id: URL, key: String)? = try context.performAndWait {
            for entity in model.entities where !entity.isAbstract {
                guard let attribute = entity.storedAttributes.first(where: { $0.attributeType == .string && $0.isOptional && $0.derivationExpression == nil }) else { continue }
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.fetchLimit = 1
                guard let object = try context.fetch(request).first else { continue }
                object.setValue("changed on Linux", forKey: attribute.name)
                try context.save()
                return (object.objectID.uriRepresentation(), attribute.name)
            }
            return nil
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        if changed == nil {
            // Only a store with no such object changes nothing (bnr's TestModel.sqlite is empty).
            #expect(try StoreInspection(storeAt: url).entities.allSatisfy { $0.rowCount == 0 }, "\(fixture)")
        }
        if let changed {
            let reopened = try open()
            let check = reopened.newBackgroundContext()
            try check.performAndWait { () throws in
                let id = try #require(reopened.persistentStoreCoordinator.managedObjectID(forURIRepresentation: changed.id))
                #expect(try check.existingObject(with: id).value(forKey: changed.key) as? String == "changed on Linux")
            }
            try reopened.persistentStoreCoordinator.remove(reopened.persistentStoreCoordinator.persistentStores[0])
        }
        #expect(try schema() == before, "saving leaves the schema as Core Data made it")
    }

    @Test func orderedRelationshipsKeepTheirOrderFromTheCache() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V5.sqlite", into: directory)
        let container = try PersistentContainer.loaded(at: url, model: try ManagedObjectModel(cachedInStoreAt: url))
        let db = try RawSQLite(url)
        let expected = try db.rows("SELECT c.ZUUID FROM ZBOOKMARKENTITY c JOIN ZBOOKMARKENTITY p ON c.ZPARENT = p.Z_PK WHERE p.ZUUID = 'bookmarks_root' ORDER BY c.Z_FOK_PARENT").map { $0[0] as? String }
        #expect(expected.count > 1)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "BookmarkEntity")
            request.predicate = NSPredicate(format: "uuid == %@", "bookmarks_root")
            let root = try #require(try context.fetch(request).first)
            let children = try #require(root.value(forKey: "children") as? [ManagedObject])
            #expect(children.map { $0.value(forKey: "uuid") as? String } == expected)
        }
    }

    @Test func historyInAnAppleStoreReadsAsHistory() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("coredataplus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory)
        let container = try PersistentContainer.loaded(at: url, model: try ManagedObjectModel(cachedInStoreAt: url)) {
            $0.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        }
        let db = try RawSQLite(url)
        let changes = try #require(try db.rows("SELECT COUNT(*) FROM ACHANGE").first?.first as? Int64)
        let transactions = try #require(try db.rows("SELECT COUNT(*) FROM ATRANSACTION").first?.first as? Int64)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
            let history = try #require(result.result as? [PersistentHistoryTransaction])
            #expect(history.count == Int(transactions))
            #expect(history.reduce(0) { $0 + ($1.changes?.count ?? 0) } == Int(changes))
            #expect(history.allSatisfy { $0.changes?.allSatisfy { $0.changedObjectID.entity.managedObjectModel === container.managedObjectModel } ?? false })
        }
    }
}
