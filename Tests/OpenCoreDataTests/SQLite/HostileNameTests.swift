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
        ("Note", "_title", "byTitle"),
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
