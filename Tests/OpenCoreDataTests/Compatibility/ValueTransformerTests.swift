import Foundation
import OpenCoreData
import Testing
import TestSupport

/// CoreDataPlus's `Content`, archived by its app under the class name `Content` (a top-level
/// class: NSKeyedArchiver on Linux names nested classes with an error).
final class FixtureContent: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let text: String
    init(text: String) { self.text = text }
    func encode(with coder: NSCoder) { coder.encode(text as NSString, forKey: "text") }
    required init?(coder: NSCoder) { text = (coder.decodeObject(of: NSString.self, forKey: "text") as String?) ?? "" }
}

/// Transformable attributes go through value transformers: the built-in secure unarchiver for
/// Foundation values, and transformers the app registers by name (here for an Apple store).
@Suite(.serialized, .dedicatedThread) struct ValueTransformerTests {
    /// What the app would register as "ContentTransformer".
    struct ContentTransformer: ValueTransforming {
        func transformedValue(_ value: Any?) -> Data? {
            guard let content = value as? FixtureContent, let archiver = try? NSKeyedArchiver.archivedData(withRootObject: content, requiringSecureCoding: true) else { return nil }
            return archiver
        }
        func reverseTransformedValue(_ data: Data?) -> Any? {
            guard let data, let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: data) else { return nil }
            unarchiver.setClass(FixtureContent.self, forClassName: "Content")
            return unarchiver.decodeObject(of: FixtureContent.self, forKey: NSKeyedArchiveRootObjectKey)
        }
    }

    @Test func foundationValuesRoundTripThroughTheDefaultTransformer() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Tags.sqlite")
        func open() throws -> PersistentContainer {
            let entity = EntityDescription(name: "Item", properties: [AttributeDescription(name: "tags", type: .transformable)])
            return try PersistentContainer.loaded(at: url, model: ManagedObjectModel(entities: [entity]))
        }
        let container = try open()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let item = ManagedObject(entity: try #require(container.managedObjectModel.entitiesByName["Item"]), insertInto: context)
            item.setValue(["swift", "linux"], forKey: "tags")
            try context.save()
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        // Stored as a keyed archive, the form Core Data's NSSecureUnarchiveFromData reads.
        let stored = try #require(try RawSQLite(url).rows("SELECT ZTAGS FROM ZITEM").first?.first as? Data)
        #expect(stored.starts(with: Array("bplist00".utf8)))
        let reopened = try open()
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            let item = try #require(try check.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
            #expect(item.value(forKey: "tags") as? [String] == ["swift", "linux"])
            // Dictionary results show the app's value too.
            let rows = FetchRequest<NSDictionary>(entityName: "Item")
            rows.resultType = .dictionaryResultType
            #expect(try check.fetch(rows).first?["tags"] as? [String] == ["swift", "linux"])
        }
    }

    @Test func aRegisteredTransformerReadsAnAppleStoresValuesAndWritesNewOnes() throws {
        ValueTransformers.register(ContentTransformer(), forName: "ContentTransformer")
        defer { ValueTransformers.register(nil, forName: "ContentTransformer") }
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("coredataplus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory)
        let container = try Fixtures.open(url, model: try ManagedObjectModel(cachedInStoreAt: url))
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let pages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Page"))
            #expect(pages.count == 4970)
            for page in pages {
                let number = try #require(page.value(forKey: "number") as? Int32)
                #expect((page.value(forKey: "content") as? FixtureContent)?.text == "content for page \(number)")
            }
            pages[0].setValue(FixtureContent(text: "rewritten"), forKey: "content")
            try context.save()
            context.refreshAllObjects()
            #expect((pages[0].value(forKey: "content") as? FixtureContent)?.text == "rewritten")
        }
        // Without the transformer the stored bytes come back as they are.
        ValueTransformers.register(nil, forName: "ContentTransformer")
        try context.performAndWait { () throws in
            let page = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Page")).first)
            context.refresh(page, mergeChanges: false)
            #expect((page.value(forKey: "content") as? Data)?.starts(with: Array("bplist00".utf8)) == true)
        }
    }
}
