import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct AttributeValueTests {
    @Test(arguments: StoreKind.allCases)
    func everyAttributeTypeRoundTripsThroughANewContainer(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let stack = try TestStack(kind, directory: directory)
        let uuid = UUID()
        let created = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let sample = Sample(context: context)
            sample.small = .max
            sample.medium = .min
            sample.large = .max
            sample.plain = -7
            sample.ratio = 0.1
            sample.single = 1.5
            sample.flag = true
            sample.title = "Émile 🌍"
            sample.created = created
            sample.payload = Data([0, 1, 2, 255])
            sample.identifier = uuid
            sample.link = URL(string: "https://example.com/a?b=c")
            sample.amount = Decimal(string: "12345.6789")!
            sample.code = "A1"
            try context.save()
        }
        // The in-memory store lives as long as its coordinator; the SQLite one is reopened.
        let reopened = kind == .sqlite ? try TestStack(kind, directory: directory) : stack
        let reader = reopened.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let samples = try reader.fetch(Sample.fetchRequest())
            #expect(samples.count == 1)
            let sample = try #require(samples.first)
            #expect(sample.small == .max)
            #expect(sample.medium == .min)
            #expect(sample.large == .max)
            #expect(sample.plain == -7)
            #expect(sample.ratio == 0.1)
            #expect(sample.single == 1.5)
            #expect(sample.flag)
            #expect(sample.title == "Émile 🌍")
            #expect(sample.created == created)
            #expect(sample.payload == Data([0, 1, 2, 255]))
            #expect(sample.identifier == uuid)
            #expect(sample.link == URL(string: "https://example.com/a?b=c"))
            #expect(sample.amount == Decimal(string: "12345.6789")!)
            #expect(sample.note == nil)
            #expect(sample.code == "A1")
        }
    }

    @Test func newObjectsStartWithTheDeclaredDefaultsAndTransientsStayOutOfTheModel() throws {
        let stack = try TestStack(.inMemory)
        let entity = try #require(stack.container.managedObjectModel.entitiesByName["Sample"])
        #expect(entity.attributesByName["scratch"] == nil)
        #expect(entity.attributesByName["title"]?.isOptional == false)
        #expect(entity.attributesByName["note"]?.isOptional == true)
        #expect(entity.attributesByName["medium"]?.attributeType == .integer32)
        #expect(entity.attributesByName["plain"]?.attributeType == .integer64)
        #expect(entity.uniquenessConstraints == [["code"]])
        let context = stack.container.newBackgroundContext()
        context.performAndWait {
            let sample = Sample(context: context)
            #expect(sample.title == "untitled")
            #expect(sample.value(forKey: "title") as? String == "untitled")
            sample.scratch = 5
            #expect(sample.scratch == 5)
            #expect(sample.changedValues()["scratch"] == nil)
        }
    }

    @Test func untypedAccessUsesTheAttributesSwiftTypes() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let sample = Sample(context: context)
            sample.setValue(12, forKey: "medium")
            sample.setValue(Int16(3), forKey: "small")
            sample.setValue(nil, forKey: "note")
            sample.setValue("x", forKey: "note")
            #expect(sample.medium == 12)
            #expect(sample.value(forKey: "medium") as? Int32 == 12)
            #expect(sample.value(forKey: "small") as? Int16 == 3)
            #expect(sample.value(forKey: "note") as? String == "x")
            #expect(sample.value(forKey: "payload") == nil)
            try sample.setValidatedValue(2.5, forKey: "ratio")
            #expect(sample.ratio == 2.5)

            let wrongType = #expect(throws: CoreDataError.self) { try sample.setValidatedValue("twelve", forKey: "medium") }
            #expect(wrongType?.code == .managedObjectValidation)
            #expect(wrongType?.key == "medium")
            let outOfRange = #expect(throws: CoreDataError.self) { try sample.setValidatedValue(70_000, forKey: "small") }
            #expect(outOfRange?.message.contains("Integer 16") == true)
            let unknown = #expect(throws: CoreDataError.self) { try sample.validatedValue(forKey: "nope") }
            #expect(unknown?.message.contains("has no attribute named 'nope'") == true)
            #expect(sample.medium == 12)
        }
    }

    @Test func valueForAnUnknownKeyTraps() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack(.inMemory)
            let context = stack.container.newBackgroundContext()
            context.performAndWait { _ = Note(context: context).value(forKey: "missing") }
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("has no attribute named 'missing'"))
    }

    @Test func setValueOfTheWrongTypeTraps() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack(.inMemory)
            let context = stack.container.newBackgroundContext()
            context.performAndWait { Note(context: context).setValue("one", forKey: "id") }
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("does not fit the attribute 'id'"))
    }

    @Test func programmaticModelsWorkWithoutMacros() throws {
        let entity = EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: "?"),
            AttributeDescription(name: "age", type: .integer16, defaultValue: 0),
        ])
        let model = ManagedObjectModel(entities: [entity])
        let stack = try TestStack(.sqlite, model: model)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let person = ManagedObject(entity: try #require(model.entitiesByName["Person"]), insertInto: context)
            #expect(person.value(forKey: "name") as? String == "?")
            person.setValue("Ada", forKey: "name")
            person.setValue(36, forKey: "age")
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "age > 30")
            let people = try context.fetch(request)
            #expect(people.map { $0.value(forKey: "name") as? String } == ["Ada"])
        }
    }

    /// A model read from a store's cache (or a model file) has transient attributes without
    /// value slots: reading one gives its default, setting one keeps the value in memory, a save
    /// writes nothing for it, and turning the object into a fault forgets it.
    @Test func transientAttributesOfAModelReadFromAStoreKeepTheirValuesInMemory() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Transient.sqlite")
        let draft = AttributeDescription(name: "draft", type: .string, defaultValue: "none")
        draft.isTransient = true
        let written = ManagedObjectModel(entities: [EntityDescription(name: "Memo", properties: [AttributeDescription(name: "title", type: .string), draft])])
        let first = try PersistentContainer.loaded(at: url, model: written)
        try first.viewContext.performAndWait { () throws in
            ManagedObject(entity: written.entitiesByName["Memo"]!, insertInto: first.viewContext).setValue("kept", forKey: "title")
            try first.viewContext.save()
        }
        try first.persistentStoreCoordinator.remove(first.persistentStoreCoordinator.persistentStores[0])

        let cached = try ManagedObjectModel(cachedInStoreAt: url)
        let container = try PersistentContainer.loaded(at: url, model: cached)
        let context = container.viewContext
        try context.performAndWait { () throws in
            let memo = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Memo")).first)
            // Every attribute of every object, as a tool that dumps a store reads them.
            for property in memo.entity.allProperties where property is AttributeDescription {
                _ = memo.value(forKey: property.name)
            }
            #expect(memo.value(forKey: "draft") as? String == "none")
            memo.setValue("typing…", forKey: "draft")
            #expect(memo.value(forKey: "draft") as? String == "typing…")
            #expect(throws: CoreDataError.self) { try memo.setValidatedValue(42, forKey: "draft") }
            memo.setValue("changed", forKey: "title")
            try context.save()
            #expect(memo.value(forKey: "draft") as? String == "typing…")
            context.refresh(memo, mergeChanges: false)
            #expect(memo.value(forKey: "draft") as? String == "none")
            #expect(memo.value(forKey: "title") as? String == "changed")
        }
        let columns = try RawSQLite(url).rows("SELECT name FROM pragma_table_info('ZMEMO')").compactMap { $0[0] as? String }
        #expect(!columns.contains("ZDRAFT"))
    }
}
