import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A model is input too: names from a model file become table, column and index names, so a
/// name that is not a plain word is refused before any SQL runs.
@Suite(.dedicatedThread) struct HostileNameTests {
    static let injected = "title VARCHAR); CREATE TABLE PWNED (X); CREATE TRIGGER T AFTER INSERT ON ZNOTE BEGIN DELETE FROM ZNOTE; END; --"

    /// A `.xcdatamodel` whose attribute name carries SQL.
    static func modelFile(attribute: String, in directory: TemporaryDirectory) throws -> URL {
        let bundle = directory.file("Crafted.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let escaped = attribute.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Note" representedClassName="Note" syncable="YES" codeGenerationType="class">
                <attribute name="\(escaped)" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """
        try Data(xml.utf8).write(to: bundle.appendingPathComponent("contents"))
        return bundle
    }

    @Test func anAttributeNameCarryingSQLInAModelFileIsRefusedBeforeAnySQLRuns() throws {
        let directory = TemporaryDirectory()
        let model = try ManagedObjectModel(contentsOf: try Self.modelFile(attribute: Self.injected, in: directory), version: nil)
        let url = directory.file("Store.sqlite")
        let error = try #require(throws: CoreDataError.self) { _ = try PersistentContainer.loaded(at: url, model: model) }
        #expect(error.code == .coreData)
        #expect(error.message.contains("not a valid name"))
        // Nothing was created: no table, no trigger.
        if FileManager.default.fileExists(atPath: url.path) {
            #expect(try RawSQLite(url).rows("SELECT name FROM sqlite_master").isEmpty)
        }
    }

    @Test(arguments: [
        ("Note\"; DROP TABLE Z_METADATA; --", "title", "byTitle"),
        ("Note", "ti tle", "byTitle"),
        ("Note", "title", "by) ; DROP TABLE ZNOTE; --"),
        ("9Note", "title", "byTitle"),
        ("_Note", "title", "byTitle"),
        ("Note", "_ti tle", "byTitle"),
        ("Note", "title", "_by-title"),
        ("Ñote", "title", "byTitle"),
    ])
    func namesThatAreNotPlainWordsAreRefused(entity: String, attribute: String, index: String) throws {
        let title = AttributeDescription(name: attribute, type: .string)
        let note = EntityDescription(name: entity, properties: [title])
        note.indexes = [FetchIndexDescription(name: index, elements: [FetchIndexDescription.Element(property: attribute)])]
        let directory = TemporaryDirectory()
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: directory.file("Store.sqlite"), model: ManagedObjectModel(entities: [note]))
        }
        #expect(error.message.contains("not a valid name"))
    }

    /// Apple's frameworks name properties with leading underscores (macOS's knowledge store has
    /// `_CDEntityMetadataKey__bestLanguage` on `StructuredMetadata`); such stores must open, and
    /// their rows read and write, on every store. A property whose column would be `Z_PK` gets a
    /// column of its own.
    @Test(arguments: StoreKind.allCases)
    func propertiesNamedWithLeadingUnderscoresAsApplesFrameworksNameThemWork(kind: StoreKind) throws {
        let language = AttributeDescription(name: "_CDEntityMetadataKey__bestLanguage", type: .string)
        let key = AttributeDescription(name: "_pk", type: .integer64)
        let metadata = EntityDescription(name: "StructuredMetadata", properties: [language, key])
        metadata.indexes = [FetchIndexDescription(name: "_byLanguage", elements: [FetchIndexDescription.Element(property: language.name)])]
        let stack = try TestStack(kind, model: ManagedObjectModel(entities: [metadata]))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (index, code) in ["en", "fr", "de"].enumerated() {
                let row = ManagedObject(entity: stack.container.managedObjectModel.entitiesByName["StructuredMetadata"]!, insertInto: context)
                row.setValue(code, forKey: "_CDEntityMetadataKey__bestLanguage")
                row.setValue(Int64(100 + index), forKey: "_pk")
            }
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        let found = try reader.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "StructuredMetadata")
            request.predicate = NSPredicate(format: "_CDEntityMetadataKey__bestLanguage == %@ OR _pk == 102", "fr")
            request.sortDescriptors = [NSSortDescriptor(key: "_pk", ascending: true)]
            return try reader.fetch(request).map { ($0.value(forKey: "_CDEntityMetadataKey__bestLanguage") as? String, $0.value(forKey: "_pk") as? Int64) }
        }
        #expect(found.map(\.0) == ["fr", "de"])
        #expect(found.map(\.1) == [101, 102])
    }

    /// The store keeps the model it was written with (`Z_MODELCACHE`); a store of such a model
    /// opens from that model alone, as Apple's system stores are opened by tools that lack their
    /// model files.
    @Test func aStoreWhoseCachedModelHasLeadingUnderscoresOpensFromIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Knowledge.sqlite")
        let metadata = EntityDescription(name: "StructuredMetadata", properties: [AttributeDescription(name: "_CDEntityMetadataKey__bestLanguage", type: .string)])
        do {
            let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(entities: [metadata]))
            try container.viewContext.performAndWait { () throws in
                ManagedObject(entity: container.managedObjectModel.entitiesByName["StructuredMetadata"]!, insertInto: container.viewContext)
                    .setValue("sv", forKey: "_CDEntityMetadataKey__bestLanguage")
                try container.viewContext.save()
            }
        }
        #expect(try RawSQLite(url).rows("SELECT Z_CDENTITYMETADATAKEY__BESTLANGUAGE FROM ZSTRUCTUREDMETADATA").count == 1)
        let cached = try ManagedObjectModel(cachedInStoreAt: url)
        let container = try PersistentContainer.loaded(at: url, model: cached)
        let values = try container.viewContext.performAndWait { () throws in
            try container.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "StructuredMetadata")).map { $0.value(forKey: "_CDEntityMetadataKey__bestLanguage") as? String }
        }
        #expect(values == ["sv"])
    }

    @Test func plainNamesOfEitherCaseStillWork() throws {
        let directory = TemporaryDirectory()
        let note = EntityDescription(name: "note_2", properties: [AttributeDescription(name: "Title_1", type: .string)])
        let container = try PersistentContainer.loaded(at: directory.file("Store.sqlite"), model: ManagedObjectModel(entities: [note]))
        try container.viewContext.performAndWait { () throws in
            ManagedObject(entity: container.managedObjectModel.entitiesByName["note_2"]!, insertInto: container.viewContext).setValue("a", forKey: "Title_1")
            try container.viewContext.save()
        }
    }
}
