import Foundation
import OpenCoreData
import OpenCoreDataCore
import Testing
import TestSupport

/// `ocd codegen`: `@Managed` classes written from Xcode's model files keep the files' version
/// hashes, so that stores Apple's Core Data wrote with those models open with the classes alone.
/// The classes in `Generated/` are the tool's output for seven fixture models (compiled with the
/// tests; `theGeneratedFilesAreTheToolsOutput` checks they are current).
@Suite(.dedicatedThread) struct CodegenTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var model: String
        var version: String
        var store: String
        var prefix: String
        var folder: String
        var classes: @Sendable () -> [any ManagedEntity.Type]
        var testDescription: String { "\(folder)" }
    }

    static let cases: [Case] = [
        Case(model: "bnr-coredatastack/Sample Model/Deprecated/Sample.xcdatamodeld", version: "TestModel",
             store: "bnr-coredatastack/Sample Model/Deprecated/TestModel.sqlite", prefix: "BNR", folder: "BNRTestModel",
             classes: { [BNRAuthor.self, BNRBook.self] }),
        Case(model: "ddg-bsk/Sources/Bookmarks/BookmarksModel.xcdatamodeld", version: "BookmarksModel",
             store: "ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V1.sqlite", prefix: "BK1", folder: "Bookmarks1",
             classes: { [BK1BookmarkEntity.self] }),
        Case(model: "ddg-bsk/Sources/Bookmarks/BookmarksModel.xcdatamodeld", version: "BookmarksModel 5",
             store: "ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V5.sqlite", prefix: "BK5", folder: "Bookmarks5",
             classes: { [BK5BookmarkEntity.self] }),
        Case(model: "objcio-moody/Migrations/Migrations/Moody.xcdatamodeld", version: "Moody",
             store: "objcio-moody/Migrations/MigrationsTests/Moody.moody", prefix: "MD", folder: "Moody",
             classes: { [MDMood.self, MDGeographicRegion.self, MDContinent.self, MDCountry.self] }),
        Case(model: "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", version: "SampleModel",
             store: "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", prefix: "SMP", folder: "SampleModel",
             classes: { [SMPCar.self, SMPSportCar.self, SMPExpensiveSportCar.self, SMPPerson.self] }),
        Case(model: "bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld", version: "Model1",
             store: "bookmigration-mhw/BookMigration-master/BookMigration/Model1.sqlite", prefix: "BM1", folder: "BookMigration1",
             classes: { [BM1Book.self, BM1User.self] }),
        Case(model: "coredataplus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld", version: "SampleModel3",
             store: "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite", prefix: "S3", folder: "SampleModel3",
             classes: { [S3User.self] }),
    ]

    static let generated = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Generated")

    @Test(arguments: cases)
    func generatedClassesOpenTheStoresCoreDataWrote(_ item: Case) throws {
        let directory = TemporaryDirectory()
        let store = try Fixtures.copy(item.store, into: directory)
        let file = try ManagedObjectModel(contentsOf: Fixtures.url(item.model), version: item.version)
        let classes = ManagedObjectModel(item.classes())
        let stored = try #require(try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: store)["NSStoreModelVersionHashes"] as? [String: Data])
        #expect(classes.entityVersionHashesByName == file.entityVersionHashesByName)
        #expect(classes.entityVersionHashesByName == stored)
        // Every row reads through the classes, as through the model file.
        let byClasses = try Fixtures.open(store, model: classes)
        let counts = try byClasses.viewContext.performAndWait { () throws in
            try classes.entities.map { try byClasses.viewContext.count(for: FetchRequest<ManagedObject>(entityName: $0.name)) }
        }
        let other = TemporaryDirectory()
        let copy = try Fixtures.copy(item.store, into: other)
        let byFile = try Fixtures.open(copy, model: file)
        let expected = try byFile.viewContext.performAndWait { () throws in
            try classes.entities.map { try byFile.viewContext.count(for: FetchRequest<ManagedObject>(entityName: $0.name)) }
        }
        #expect(counts == expected)
    }

    @Test func bookmarksReadThroughTheGeneratedProperties() throws {
        let directory = TemporaryDirectory()
        let store = try Fixtures.copy("ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V5.sqlite", into: directory)
        let container = try Fixtures.open(store, model: ManagedObjectModel(BK5BookmarkEntity.self))
        let db = try RawSQLite(store)
        let expected = try db.rows("""
            SELECT c.ZUUID FROM ZBOOKMARKENTITY c JOIN ZBOOKMARKENTITY p ON c.ZPARENT = p.Z_PK \
            WHERE p.ZUUID = 'bookmarks_root' ORDER BY c.Z_FOK_PARENT
            """).map { $0[0] as? String }
        #expect(expected.count > 1)
        try container.viewContext.performAndWait { () throws in
            let request = BK5BookmarkEntity.fetchRequest()
            request.predicate = NSPredicate(format: "uuid == %@", "bookmarks_root")
            let root = try #require(try container.viewContext.fetch(request).first)
            #expect(root.isFolder)
            #expect(root.children.map(\.uuid) == expected)
            #expect(root.children.allSatisfy { $0.parent === root })
            // A key path of a generated property sorts (`NSSortDescriptor(keyPath:)` as Xcode's templates write it).
            let sorted = BK5BookmarkEntity.fetchRequest()
            sorted.sortDescriptors = [NSSortDescriptor(keyPath: \BK5BookmarkEntity.uuid, ascending: true)]
            let uuids = try container.viewContext.fetch(sorted).map(\.uuid)
            #expect(uuids == uuids.sorted { ($0 ?? "") < ($1 ?? "") })
        }
    }

    @Test(arguments: cases)
    func theGeneratedFilesAreTheToolsOutput(_ item: Case) throws {
        var generator = ManagedClassSource()
        generator.classPrefix = item.prefix
        generator.sourceName = URL(fileURLWithPath: item.model).lastPathComponent + " (version \(item.version))"
        let files = try generator.files(for: ManagedObjectModel(contentsOf: Fixtures.url(item.model), version: item.version))
        let folder = Self.generated.appendingPathComponent(item.folder)
        let committed = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.map(\.name).sorted() == committed)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)
            #expect(text == file.text, "\(item.folder)/\(file.name) differs from `ocd codegen`'s output: generate it again")
        }
    }

    /// The classes `CoreDataModuleTests` builds (`--module CoreData`: `import CoreData`, Linux only).
    @Test func theCoreDataModulesGeneratedFileIsTheToolsOutput() throws {
        var generator = ManagedClassSource()
        generator.moduleName = "CoreData"
        generator.sourceName = "BookmarksModel.xcdatamodeld (version BookmarksModel 5)"
        let model = try ManagedObjectModel(contentsOf: Fixtures.url("ddg-bsk/Sources/Bookmarks/BookmarksModel.xcdatamodeld"), version: "BookmarksModel 5")
        let files = try generator.files(for: model)
        let folder = Fixtures.repository.appendingPathComponent("Tests/CoreDataModuleTests/Generated")
        #expect(files.map(\.name) == ["BookmarkEntity.swift"])
        for file in files {
            #expect(try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8) == file.text)
            #expect(file.text.contains("#if os(Linux)") && file.text.contains("import CoreData") && file.text.hasSuffix("#endif\n"))
        }
    }

    /// A class named like a type the declarations use, or a property named like one of every
    /// managed object's, would not compile: refused, naming it.
    @Test func namesTheCodeCannotUseAreRefused() throws {
        let date = EntityDescription(name: "Date", managedObjectClass: ManagedObject.self, properties: [
            AttributeDescription(name: "entity", type: .string),
        ])
        let error = try #require(throws: CoreDataError.self) { try ManagedClassSource().files(for: ManagedObjectModel(entities: [date])) }
        #expect(error.message.contains("the class of Date would be named Date"))
        #expect(error.message.contains("Date.entity has the name of a property of every managed object"))
        let first = EntityDescription(name: "First", managedObjectClass: ManagedObject.self, properties: [])
        let second = EntityDescription(name: "Second", managedObjectClass: ManagedObject.self, properties: [])
        first.managedObjectClassName = "Shared"
        second.managedObjectClassName = "App.Shared"
        let shared = try #require(throws: CoreDataError.self) { try ManagedClassSource().files(for: ManagedObjectModel(entities: [first, second])) }
        #expect(shared.message.contains("the entities First, Second name one class, Shared"))
        var badPrefix = ManagedClassSource()
        badPrefix.classPrefix = "My-"
        #expect(throws: CoreDataError.self) { try badPrefix.files(for: ManagedObjectModel(entities: [first])) }
        var badModule = ManagedClassSource()
        badModule.moduleName = "Foundation; import Evil"
        #expect(throws: CoreDataError.self) { try badModule.files(for: ManagedObjectModel(entities: [first])) }
        var prefixed = ManagedClassSource()
        prefixed.classPrefix = "My"
        let renamed = try #require(throws: CoreDataError.self) { try prefixed.files(for: ManagedObjectModel(entities: [date])) }
        #expect(!renamed.message.contains("would be named"))
    }

    /// Every model version in the fixtures is written as classes, or refused naming each attribute
    /// `@Managed` cannot declare with the same hash.
    @Test func everyFixtureModelIsWrittenOrRefusedWithItsReasons() throws {
        let enumerator = try #require(FileManager.default.enumerator(at: Fixtures.root, includingPropertiesForKeys: nil))
        var written = 0, refused = 0
        for case let url as URL in enumerator where url.pathExtension == "xcdatamodel" {
            let model = try ManagedObjectModel(contentsOf: url, version: nil)
            do {
                let files = try ManagedClassSource().files(for: model)
                #expect(files.count == model.entities.count, "\(url.path)")
                #expect(Set(files.map(\.name)).count == files.count, "\(url.path)")
                written += 1
            } catch {
                var unsupported: [String] = []
                for entity in model.entities {
                    for case let attribute as AttributeDescription in entity.properties where !attribute.isTransient {
                        let hashedButNotDeclarable: Set<AttributeType> = [.objectID]
                        if hashedButNotDeclarable.contains(attribute.attributeType) {
                            unsupported.append("\(entity.name).\(attribute.name)")
                        }
                    }
                }
                for feature in model.unsupportedFeatures where feature.contains(": attribute type ") {
                    unsupported.append(String(feature.prefix { $0 != ":" }))
                }
                #expect(!unsupported.isEmpty, "\(url.path) was refused: \(error)")
                for name in unsupported { #expect(error.message.contains(name), "\(url.path): \(name)") }
                refused += 1
            }
        }
        #expect(written + refused == 48)
        #expect(written == 47)
    }
}

/// `@Attribute(.required)` and `.optional`: the model's optionality where the Swift type says otherwise.
@Managed
final class XcodeStyleNote: ManagedObject {
    @Attribute(.required) var title: String?
    @Attribute(.optional) var rank: Int16 = 0
}

@Suite(.dedicatedThread) struct ModelOptionalityTests {
    @Test func aRequiredOptionalPropertyFailsTheSaveWhenNil() throws {
        let container = try PersistentContainer.loaded(at: TemporaryDirectory().file("notes.sqlite"), model: ManagedObjectModel(XcodeStyleNote.self))
        let entity = try #require(container.managedObjectModel.entitiesByName["XcodeStyleNote"])
        #expect(entity.attributesByName["title"]?.isOptional == false)
        #expect(entity.attributesByName["rank"]?.isOptional == true)
        let context = container.viewContext
        try context.performAndWait { () throws in
            let note = XcodeStyleNote(context: context)
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code.rawValue == 1570)
            note.title = "Kept"
            try context.save()
        }
    }

    @Test func anOptionalScalarReadsItsDefaultWhereTheStoreHasNull() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("notes.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(XcodeStyleNote.self))
        try container.viewContext.performAndWait { () throws in
            let note = XcodeStyleNote(context: container.viewContext)
            note.title = "One"
            note.setValue(nil, forKey: "rank")
            try container.viewContext.save()
            container.viewContext.refreshAllObjects()
            #expect(note.value(forKey: "rank") == nil)
            #expect(note.rank == 0)
        }
        let db = try RawSQLite(url)
        #expect(try db.rows("SELECT ZRANK FROM ZXCODESTYLENOTE").map { $0[0] == nil } == [true])
    }
}

/// What `ocd codegen` declares, used by hand: a Transformable property of any type, a derived
/// attribute, an entity named apart from its class, and a uniqueness constraint over two attributes.
@Managed(entityName: "Shelf", unique: [["city", "number"]])
final class GeneratedStyleShelf: ManagedObject {
    var city: String = ""
    var number: Int16 = 0
    @Attribute(.transformable(by: "NSSecureUnarchiveFromData")) var labels: [String]?
    @Attribute(.derived("count:(books)")) var bookCount: Int64 = 0
    @Relationship(inverse: \GeneratedStyleBook.shelf) var books: Set<GeneratedStyleBook> = []
}

@Managed
final class GeneratedStyleBook: ManagedObject {
    var title: String?
    var shelf: GeneratedStyleShelf?
}

@Suite(.dedicatedThread) struct GeneratedStyleTests {
    static func model() -> ManagedObjectModel { ManagedObjectModel(GeneratedStyleShelf.self, GeneratedStyleBook.self) }

    /// A relationship's hash covers its inverse's name, which a class names on one side only:
    /// the hashes read before the model is used are those it has once used, and reading them
    /// leaves the model as it was (it may still change).
    @Test func hashesReadBeforeUseAreTheHashesInUse() throws {
        let model = Self.model()
        let before = model.entityVersionHashesByName
        #expect(model.entitiesByName["GeneratedStyleBook"]?.relationshipsByName["shelf"]?.inverseName == nil)
        let stack = try TestStack(.sqlite, model: model)
        #expect(stack.container.managedObjectModel.entityVersionHashesByName == before)
        #expect(model.entitiesByName["GeneratedStyleBook"]?.relationshipsByName["shelf"]?.inverseName == "books")
    }

    @Test(arguments: [StoreKind.sqlite] + StoreKind.allCases.filter { $0 == .postgreSQL })
    func transformableDerivedAndConstrainedPropertiesBehaveAsTheModelSays(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: Self.model())
        let entity = try #require(stack.container.managedObjectModel.entitiesByName["Shelf"])
        #expect(entity.managedObjectClass == GeneratedStyleShelf.self)
        #expect(entity.attributesByName["labels"]?.attributeType == .transformable)
        #expect(entity.uniquenessConstraints == [["city", "number"]])
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let shelf = GeneratedStyleShelf(context: context)
            shelf.city = "Oslo"
            shelf.number = 1
            shelf.labels = ["fiction", "new"]
            for title in ["A", "B"] {
                let book = GeneratedStyleBook(context: context)
                book.title = title
                book.shelf = shelf
            }
            try context.save()
            // Same city, another number: allowed; same city and number: a constraint conflict.
            let other = GeneratedStyleShelf(context: context)
            other.city = "Oslo"
            other.number = 2
            try context.save()
            let clash = GeneratedStyleShelf(context: context)
            clash.city = "Oslo"
            clash.number = 1
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code.rawValue == 133021)
            context.delete(clash)
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = GeneratedStyleShelf.fetchRequest()
            request.predicate = NSPredicate(format: "number == 1")
            let shelf = try #require(try reader.fetch(request).first)
            #expect(shelf.labels == ["fiction", "new"])
            #expect(shelf.bookCount == 2)
            #expect(Set(shelf.books.compactMap(\.title)) == ["A", "B"])
        }
    }
}
