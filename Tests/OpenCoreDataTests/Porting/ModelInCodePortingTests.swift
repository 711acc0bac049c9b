import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A model built in code with Core Data's case names (`.stringAttributeType`,
/// `.cascadeDeleteRule`), as libraries and test suites write it.
@Suite(.dedicatedThread) struct ModelInCodePortingTests {
    @Test func coreDataCaseNamesBuildAWorkingModel() throws {
        let title = NSAttributeDescription(name: "title", type: .stringAttributeType)
        let count = NSAttributeDescription(name: "count", type: .integer32AttributeType)
        let items = NSRelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "list")
        items.deleteRule = .cascadeDeleteRule
        let list = NSEntityDescription(name: "List", properties: [title, count, items])
        let item = NSEntityDescription(name: "Item", properties: [
            NSAttributeDescription(name: "done", type: .booleanAttributeType),
            NSRelationshipDescription(name: "list", destination: "List", inverse: "items"),
        ])
        let stack = try TestStack(.inMemory, model: NSManagedObjectModel(entities: [list, item]))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let groceries = NSManagedObject(entity: list, insertInto: context)
            groceries.setValue("Groceries", forKey: "title")
            groceries.setValue(Int32(2), forKey: "count")
            let milk = NSManagedObject(entity: item, insertInto: context)
            milk.setValue(true, forKey: "done")
            milk.setValue(groceries, forKey: "list")
            try context.save()
            context.delete(groceries)                      // cascades to its items
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
        }
        #expect(list.attributesByName["title"]?.attributeType == .string)
    }

    /// The model as Core Data code builds it property by property: empty initializers, settable
    /// `destinationEntity` and `inverseRelationship` (objects, not names), a default set before
    /// the type, a class named by `NSStringFromClass`, and a configuration.
    private func modelBuiltTheCoreDataWay() -> (NSManagedObjectModel, list: NSEntityDescription, item: NSEntityDescription) {
        let list = NSEntityDescription()
        list.name = "List"
        let item = NSEntityDescription()                   // named only after it is assigned
        item.managedObjectClassName = NSStringFromClass(PortedItem.self)

        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        title.isOptional = false
        let rank = NSAttributeDescription()
        rank.name = "rank"
        rank.defaultValue = 7                              // before the type, as some code does
        rank.attributeType = .integer64AttributeType

        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.minCount = 0
        items.maxCount = 0                                 // to-many
        items.deleteRule = .cascadeDeleteRule
        let owner = NSRelationshipDescription()
        owner.name = "list"
        owner.destinationEntity = list
        owner.maxCount = 1                                 // to-one
        owner.deleteRule = .nullifyDeleteRule
        items.inverseRelationship = owner                  // one side: the model completes the other
        item.name = "Item"

        list.properties = [title, items]
        item.properties = [rank, owner]
        let model = NSManagedObjectModel()
        model.entities = [list, item]
        model.setEntities([list, item], forConfigurationName: "Local")
        return (model, list, item)
    }

    @Test func emptyInitializersAndObjectReferencesBuildAWorkingModel() throws {
        let (model, list, item) = modelBuiltTheCoreDataWay()
        #expect(model.entities(forConfigurationName: "Local").map(\.name) == ["List", "Item"])
        #expect(list.relationshipsByName["items"]?.destinationEntity === item)
        let directory = TemporaryDirectory()
        let container = NSPersistentContainer(name: "Lists", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: directory.file("Lists.sqlite"))
        description.configuration = "Local"
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let groceries = NSManagedObject(entity: list, insertInto: context)
            groceries.setValue("Groceries", forKey: "title")
            let milk = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            #expect(milk is PortedItem)                    // the class named by NSStringFromClass
            #expect(milk.value(forKey: "rank") as? Int64 == 7)
            milk.setValue(groceries, forKey: "list")
            try context.save()
            #expect((groceries.value(forKey: "items") as? Set<NSManagedObject>)?.count == 1)   // the inverse
            context.delete(groceries)                      // cascades to its items
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
        }
        // Once in use, the references are the model's own.
        let items = try #require(list.relationshipsByName["items"])
        #expect(items.destinationEntity === item)
        #expect(items.inverseRelationship === item.relationshipsByName["list"])
        #expect(items.isToMany && items.inverseRelationship?.isToMany == false)
    }

    @Test func anAttributeWithoutATypeOrADestinationOutsideTheModelIsAClearError() throws {
        let untyped = NSAttributeDescription()
        untyped.name = "mystery"
        let lonely = NSEntityDescription()
        lonely.name = "Lonely"
        lonely.properties = [untyped]
        let model = NSManagedObjectModel()
        model.entities = [lonely]
        let error = try #require(throws: CoreDataError.self) { _ = try TestStack(.inMemory, model: model) }
        #expect(error.code == .coreData)
        #expect(error.message.contains("'mystery'") && error.message.contains("no type"), "\(error.message)")

        let elsewhere = NSEntityDescription()
        elsewhere.name = "Elsewhere"
        let link = NSRelationshipDescription()
        link.name = "link"
        link.maxCount = 1
        link.destinationEntity = elsewhere                  // never added to the model
        let source = NSEntityDescription()
        source.name = "Source"
        source.properties = [link]
        let other = NSManagedObjectModel()
        other.entities = [source]
        let refused = try #require(throws: CoreDataError.self) { _ = try TestStack(.inMemory, model: other) }
        #expect(refused.message.contains("'Elsewhere'") && refused.message.contains("not in the model"), "\(refused.message)")
    }
}

/// `NSManagedObjectModel.mergedModel(from:)`, as Xcode's older templates load their model.
@Suite(.dedicatedThread) struct MergedModelPortingTests {
    /// A bundle folder holding copies of the fixture models under the given names.
    private func bundle(_ models: [(fixture: String, name: String)], in directory: TemporaryDirectory) throws -> Bundle {
        let folder = directory.file("Models.bundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (fixture, name) in models {
            try FileManager.default.copyItem(at: Fixtures.url(fixture), to: folder.appendingPathComponent("\(name).xcdatamodeld"))
        }
        return try #require(Bundle(url: folder))
    }

    @Test func theModelsOfABundleAreMergedIntoOne() throws {
        let directory = TemporaryDirectory()
        let books = "bnr-coredatastack/Example/UniqueConstraintModel.xcdatamodeld"
        let orders = "momxml/Tests/Model.xcdatamodeld"
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [try bundle([(books, "Books"), (orders, "Orders")], in: directory)]))
        #expect(merged.entities.map(\.name).sorted() == ["Author", "Book", "Client", "Commande", "Produit", "Publisher"])
        let container = NSPersistentContainer(name: "Merged", managedObjectModel: merged)
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.file("Merged.sqlite"))]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for name in ["Author", "Client"] { _ = NSEntityDescription.insertNewObject(forEntityName: name, into: context) }
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Client")) == 1)
        }
    }

    @Test func oneModelIsItselfAndCollidingOrMissingModelsAreNil() throws {
        let books = "bnr-coredatastack/Example/UniqueConstraintModel.xcdatamodeld"
        let directories = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())   // kept until the end
        let single = NSManagedObjectModel.mergedModel(from: [try bundle([(books, "Books")], in: directories.0)])
        #expect(single?.entities.map(\.name).sorted() == ["Author", "Book", "Publisher"])
        #expect(NSManagedObjectModel.mergedModel(from: [try bundle([(books, "Books"), (books, "Copy")], in: directories.1)]) == nil)
        #expect(NSManagedObjectModel.mergedModel(from: [try bundle([], in: directories.2)]) == nil)
    }
}

/// A hand-written class for an entity of a model built in code, found by its name.
final class PortedItem: NSManagedObject {}
