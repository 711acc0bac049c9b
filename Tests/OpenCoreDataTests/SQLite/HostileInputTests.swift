import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Shapes that fuzzers rarely reach, made on purpose: nesting far deeper than any real file,
/// sub-objects shared so that expanding them explodes, compression bombs, cycles where trees are
/// expected, wrong-typed values and files that are not stores. Each must end in a `CoreDataError`
/// or a sane value, never a crash or a hang.
@Suite(.dedicatedThread) struct HostileInputTests {
    // MARK: - Binary property lists

    /// A `bplist00` file of the given encoded objects (references and offsets 4 bytes wide).
    static func bplist(_ objects: [[UInt8]], top: Int = 0) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += be(offset, 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 4] + be(objects.count, 8) + be(top, 8) + be(table, 8)
        return Data(bytes)
    }

    static func be(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * (size - 1 - $0))) }
    }

    /// An array marker for `count` ≤ 14 references, then the references.
    static func arrayObject(_ references: [Int]) -> [UInt8] {
        [0xA0 | UInt8(references.count)] + references.flatMap { be($0, 4) }
    }

    @Test func aPlistNestedAHundredThousandDeepIsRefused() throws {
        let depth = 100_000
        var objects = (0..<depth).map { Self.arrayObject([$0 + 1]) }
        objects.append([0x10, 0x01])
        let error = try #require(throws: CoreDataError.self) { _ = try BinaryPropertyListReader(Self.bplist(objects)).root() }
        #expect(error.message.contains("nest more than \(BinaryPropertyListReader.maximumDepth) deep"))
    }

    @Test func aPlistNestedWithinTheLimitIsRead() throws {
        let depth = BinaryPropertyListReader.maximumDepth - 1
        var objects = (0..<depth).map { Self.arrayObject([$0 + 1]) }
        objects.append([0x10, 0x07])
        var value = try BinaryPropertyListReader(Self.bplist(objects)).root()
        var levels = 0
        while case .array(let items) = value, let first = items.first {
            value = first
            levels += 1
        }
        #expect(levels == depth)
        #expect(value == .integer(7))
    }

    @Test func sharedSubObjectsThatWouldExpandExponentiallyAreRefused() throws {
        // 40 arrays, each holding the next one twice: 2^40 nodes once expanded.
        var objects = (0..<40).map { Self.arrayObject([$0 + 1, $0 + 1]) }
        objects.append([0x10, 0x01])
        let error = try #require(throws: CoreDataError.self) { _ = try BinaryPropertyListReader(Self.bplist(objects)).root() }
        #expect(error.message.contains("share sub-objects"))
    }

    @Test func sharedLeavesAsWritersEmitThemAreRead() throws {
        // Writers store equal strings once and refer to them everywhere: that is no explosion.
        let string: [UInt8] = [0x56] + Array("common".utf8)
        let rows = (0..<200).map { _ in Self.arrayObject(Array(repeating: 201, count: 14)) }
        let top: [UInt8] = [0xAF, 0x11, 0x00, 0xC8] + (1...200).flatMap { Self.be($0, 4) }   // an array of 200 rows
        let value = try BinaryPropertyListReader(Self.bplist([top] + rows + [string])).root()
        #expect(value.array?.count == 200)
        #expect(value.array?.last?.array?.last == .string("common"))
    }

    @Test func aPlistThatContainsItselfIsRefused() throws {
        let error = try #require(throws: CoreDataError.self) { _ = try BinaryPropertyListReader(Self.bplist([Self.arrayObject([1]), Self.arrayObject([0])])).root() }
        #expect(error.message.contains("contains itself"))
    }

    // MARK: - Keyed archives (.mom, Z_MODELCACHE)

    /// A model archive edited at the plist level: `edit` gets the `$objects` array.
    static func editedArchive(of model: ManagedObjectModel, _ edit: (inout [PropertyListValue]) throws -> Void) throws -> Data {
        guard case .dictionary(var top) = try BinaryPropertyListReader(CompiledModelWriter.archive(model)).root(),
              var objects = top["$objects"]?.array else { throw CoreDataError(.coreData, "the writer wrote no archive") }
        try edit(&objects)
        top["$objects"] = .array(objects)
        return BinaryPropertyListWriter.data(.dictionary(top))
    }

    /// The index of the archived object whose `key` refers to the string `name`.
    static func index(of name: String, key: String, in objects: [PropertyListValue]) throws -> Int {
        let string = try #require(objects.firstIndex(of: .string(name)))
        return try #require(objects.firstIndex { $0.dictionary?[key] == .uid(string) })
    }

    static func twoEntityModel() -> ManagedObjectModel {
        let child = EntityDescription(name: "Child", properties: [AttributeDescription(name: "extra", type: .string)])
        let parent = EntityDescription(name: "Parent", properties: [AttributeDescription(name: "title", type: .string)])
        parent.subentities = [child]
        return ManagedObjectModel(entities: [parent, child])
    }

    @Test func anArchiveWhoseMembersShareThemselvesWithoutEndIsRefused() throws {
        // A validation predicate: an AND of a thousand references to itself, sixteen levels deep
        // before the depth bound stops it — 1000^16 visits without a budget.
        let data = try Self.editedArchive(of: Self.twoEntityModel()) { objects in
            let attribute = try Self.index(of: "title", key: "NSPropertyName", in: objects)
            let base = objects.count
            objects.append(.dictionary(["$classname": .string("NSCompoundPredicate"),
                                        "$classes": .array([.string("NSCompoundPredicate"), .string("NSPredicate"), .string("NSObject")])]))
            objects.append(.dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")])]))
            objects.append(.dictionary(["$class": .uid(base + 1), "NS.objects": .array(Array(repeating: .uid(base + 3), count: 1_000))]))
            objects.append(.dictionary(["$class": .uid(base), "NSCompoundPredicateType": .integer(1), "NSSubpredicates": .uid(base + 2)]))
            guard case .dictionary(var fields) = objects[attribute] else { return }
            fields["NSValidationPredicates"] = .uid(base + 2)
            objects[attribute] = .dictionary(fields)
        }
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(archive: data) }
        #expect(error.message.contains("refer to each other so often"))
    }

    @Test func anArchivedModelWhoseInheritanceIsACycleIsRefused() throws {
        let data = try Self.editedArchive(of: Self.twoEntityModel()) { objects in
            let parent = try Self.index(of: "Parent", key: "NSEntityName", in: objects)
            let child = try Self.index(of: "Child", key: "NSEntityName", in: objects)
            guard case .dictionary(var fields) = objects[parent] else { return }
            fields["NSSuperentity"] = .uid(child)
            objects[parent] = .dictionary(fields)
        }
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(archive: data) }
        #expect(error.message.contains("inherits from itself"))
    }

    @Test func anUneditedArchiveStillReads() throws {
        let model = try ManagedObjectModel(archive: Self.editedArchive(of: Self.twoEntityModel()) { _ in })
        #expect(model.entitiesByName["Child"]?.superentity?.name == "Parent")
    }

    // MARK: - XML model and mapping files

    /// A copy of a fixture's XML with bytes that are not UTF-8 inside an element name, the shape
    /// on which FoundationXML traps (found by `Fuzz/run xml-model` and `xml-mapping`).
    static func notUTF8(_ relative: String, as name: String, in directory: TemporaryDirectory) throws -> URL {
        var bytes = [UInt8](try Data(contentsOf: Fixtures.url(relative)))
        let tag = Array(name == "xcmapping.xml" ? "<object ".utf8 : "<entity ".utf8)
        let at = try #require((0..<(bytes.count - tag.count)).first { Array(bytes[$0..<($0 + tag.count)]) == tag })
        bytes.insert(contentsOf: [0xFF, 0xFE, 0xFF, 0x3D], at: at + tag.count)
        let file = directory.file(name)
        try Data(bytes).write(to: file)
        return file
    }

    @Test func modelAndMappingXMLThatIsNotUTF8IsRefused() throws {
        let directory = TemporaryDirectory()
        let book = "bookmigration-mhw/BookMigration-master/BookMigration/"
        let model = try Self.notUTF8(book + "Model.xcdatamodeld/Model1.xcdatamodel/contents", as: "contents", in: directory)
        let modelError = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(contentsOf: model, version: nil) }
        #expect(modelError.message.contains("not UTF-8"))
        let folder = directory.file("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mapping = try Self.notUTF8(book + "Model1_to_Model2.xcmappingmodel/xcmapping.xml", as: "xcmapping.xml", in: directory)
        try FileManager.default.moveItem(at: mapping, to: folder.appendingPathComponent("xcmapping.xml"))
        let mappingError = try #require(throws: CoreDataError.self) {
            _ = try MappingModel(contentsOf: folder, models: Fixtures.url(book + "Model.xcdatamodeld"))
        }
        #expect(mappingError.message.contains("not UTF-8"))
    }

    @Test func anXMLModelWhoseInheritanceIsACycleIsRefusedBeforeAnythingWalksIt() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("contents")
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="A" parentEntity="B" representedClassName="A"><attribute name="a" optional="YES" attributeType="String"/></entity>
            <entity name="B" parentEntity="A" representedClassName="B"><attribute name="b" optional="YES" attributeType="String"/></entity>
        </model>
        """.utf8).write(to: file)
        // (Found by the fuzzer: the version hashes of such a model recursed until the stack overflowed.)
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(contentsOf: file, version: nil) }
        #expect(error.message.contains("inherits from itself"))
    }

    @Test func aProcessingInstructionXcodeDoesNotWriteIsRefused() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let book = "bookmigration-mhw/BookMigration-master/BookMigration/"
        let text = try String(contentsOf: Fixtures.url(book + "Model1_to_Model2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let body = text.drop { $0 != "\n" }
        // `<?xml?>` without a version is an instruction to libxml2, not a declaration (fuzzer).
        for instruction in ["<?selation?>", "<?xml?>", "<?xml ?>"] {
            try Data((instruction + "\n" + body).utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
            let error = try #require(throws: CoreDataError.self) { _ = try MappingModel(contentsOf: folder, models: Fixtures.url(book + "Model.xcdatamodeld")) }
            #expect(error.message.contains("processing instruction"), "\(instruction)")
        }
        // The fixture itself, with its XML declaration, still reads.
        _ = try MappingModel(contentsOf: Fixtures.url(book + "Model1_to_Model2.xcmappingmodel"), models: Fixtures.url(book + "Model.xcdatamodeld"))
    }

    /// An archived model (the archive fuzzer's input, kept in Tests/Fixtures/Fuzz) whose to-many
    /// names as its inverse a to-one that the destination does not have: creating a store from it
    /// read a column past the end of the destination's; now the relationship has no storage.
    @Test func anInverseOutsideTheDestinationDoesNotTrapStoreCreation() throws {
        let model = try ManagedObjectModel(archive: Data(contentsOf: Fixtures.url("Fuzz/archive-inverse-elsewhere.keyedarchive")))
        let directory = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("Created.sqlite"))
        try coordinator.remove(store)
    }

    /// Found by the XML model fuzzer (kept in Tests/Fixtures/Fuzz): a damaged model file that
    /// gave LuxuryCar the parent SportCar twice made SportCar list it twice, and freezing the
    /// model recursed until the stack overflowed.
    @Test func theFuzzedModelFileThatListedASubEntityTwiceIsRefused() throws {
        let model = try Self.modelFolder(contents: Data(contentsOf: Fixtures.url("Fuzz/xml-model-duplicate-entities.xml")))
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(contentsOf: model.url, version: nil) }
        #expect(error.message.contains("lists LuxuryCar as a sub-entity twice"))
    }

    @Test func aModelFileWithTwoEntitiesOfOneNameIsRefused() throws {
        let contents = #"<?xml version="1.0"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="Car" representedClassName="Car"/><entity name="Car" representedClassName="Car"/></model>"#
        let model = try Self.modelFolder(contents: Data(contents.utf8))
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(contentsOf: model.url, version: nil) }
        #expect(error.message.contains("two entities named 'Car'"))
    }

    /// Found by the XML model fuzzer: a to-one marked `ordered="YES"` (the flag means something
    /// only on a to-many) made reading it by key take the to-many path, which trapped. It reads
    /// as the to-one it is, before and after a save.
    @Test func aToOneMarkedOrderedReadsAsAToOne() throws {
        let contents = #"""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Bookmark" representedClassName="Bookmark">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" ordered="YES" destinationEntity="Bookmark" inverseName="fans" inverseEntity="Bookmark"/>
                    <relationship name="fans" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Bookmark" inverseName="favorite" inverseEntity="Bookmark"/>
                </entity>
            </model>
            """#
        let file = try Self.modelFolder(contents: Data(contents.utf8))
        let model = try ManagedObjectModel(contentsOf: file.url, version: nil)
        let directory = TemporaryDirectory()
        let container = try PersistentContainer.loaded(at: directory.file("Bookmarks.sqlite"), model: model)
        let context = container.newBackgroundContext()
        let entity = try #require(model.entitiesByName["Bookmark"])
        let favoriteID = try context.performAndWait { () throws in
            let (fan, favorite) = (ManagedObject(entity: entity, insertInto: context), ManagedObject(entity: entity, insertInto: context))
            favorite.setValue("home", forKey: "title")
            fan.setValue(favorite, forKey: "favorite")
            #expect(fan.value(forKey: "favorite") as? ManagedObject === favorite)
            try context.save()
            return favorite.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "Bookmark")
            request.predicate = FetchPredicate(format: "title == nil")
            let fan = try #require(try reader.fetch(request).first)
            #expect((fan.value(forKey: "favorite") as? ManagedObject)?.objectID == favoriteID)
        }
    }

    /// A temporary `.xcdatamodel` folder holding `contents` (removed when `folder` goes).
    private static func modelFolder(contents: Data) throws -> (url: URL, folder: TemporaryDirectory) {
        let folder = TemporaryDirectory()
        let model = folder.url.appendingPathComponent("Fuzzed.xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try contents.write(to: model.appendingPathComponent("contents"))
        return (model, folder)
    }

    @Test func subEntityListsThatDisagreeWithInheritanceAreRefused() throws {
        let parent = EntityDescription(name: "Parent"), other = EntityDescription(name: "Other"), child = EntityDescription(name: "Child")
        parent.subentities = [child]
        other.subentities = [child]                      // child now inherits from Other; Parent still lists it
        let model = ManagedObjectModel(entities: [parent, other, child])
        let error = try #require(throws: CoreDataError.self) { try model.freeze() }
        #expect(error.message.contains("lists Child as a sub-entity but Child inherits from Other"))
    }

    @Test func inheritanceFiveThousandLevelsDeepIsRefused() throws {
        var entities = "<entity name=\"E0\" representedClassName=\"E0\"/>"
        for level in 1..<5_000 { entities += "<entity name=\"E\(level)\" representedClassName=\"E\(level)\" parentEntity=\"E\(level - 1)\"/>" }
        let contents = "<?xml version=\"1.0\"?><model type=\"com.apple.IDECoreDataModeler.DataModel\">\(entities)</model>"
        let model = try Self.modelFolder(contents: Data(contents.utf8))
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(contentsOf: model.url, version: nil) }
        #expect(error.message.contains("more than 1000 levels below its root entity"))
    }

    /// Runs `body` on the context's queue with a saved `Author` (alias "ann") whose entity has
    /// the fetched properties `predicates` names (fetching authors).
    private func withSavedAuthor(fetching predicates: [String: String], _ body: (ManagedObject) throws -> Void) throws {
        let author = EntityDescription(name: "Author", properties: [AttributeDescription(name: "alias", type: .string)])
        for (name, predicate) in predicates.sorted(by: { $0.key < $1.key }) {
            author.properties.append(FetchedPropertyDescription(name: name, entityName: "Author", predicate: predicate))
        }
        let directory = TemporaryDirectory()
        let container = try PersistentContainer.loaded(at: directory.url.appendingPathComponent("Fetched.sqlite"), model: ManagedObjectModel(entities: [author]))
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let object = ManagedObject(entity: author, insertInto: context)
            object.setValue("ann", forKey: "alias")
            try context.save()
            try body(object)
        }
    }

    /// Found by the store fuzzer: a byte patched into a store's model cache left a fetched
    /// property with the predicate `( == $FETCH_SOURCE)`, and reading every property of an object
    /// (as `ocd dump` does) trapped in `value(forKey:)`.
    @Test func aFetchedPropertyWhosePredicateCannotBeParsedReadsAsNil() throws {
        try withSavedAuthor(fetching: ["damaged": "( == $FETCH_SOURCE) AND alias != nil", "sound": "alias == $FETCH_SOURCE.alias"]) { object in
            #expect(object.value(forKey: "damaged") == nil)
            let error = try #require(throws: CoreDataError.self) { _ = try object.validatedValue(forKey: "damaged") }
            #expect(error.message.contains("expected a key path or a value"))
            #expect((object.value(forKey: "sound") as? [ManagedObject])?.count == 1)
        }
    }

    /// Found by the archive fuzzer: a fetched property whose `$FETCH_SOURCE` key path reads
    /// itself recursed until the stack overflowed when read.
    @Test func aFetchedPropertyThatNeedsItselfIsAnErrorNotAStackOverflow() throws {
        try withSavedAuthor(fetching: ["loop": "alias == $FETCH_SOURCE.loop", "ping": "alias == $FETCH_SOURCE.pong", "pong": "alias == $FETCH_SOURCE.ping"]) { object in
            for name in ["loop", "ping"] {
                let error = try #require(throws: CoreDataError.self) { _ = try object.validatedValue(forKey: name) }
                #expect(error.message.contains("needs itself to be fetched"), "\(error)")
                #expect(object.value(forKey: name) == nil)
            }
        }
    }

    /// The archive fuzzer's input that found it (kept in Tests/Fixtures/Fuzz): every property of
    /// an object of every entity reads, the cycle as nil.
    @Test func theArchivedModelWithAFetchedPropertyCycleReadsEveryProperty() throws {
        let model = try ManagedObjectModel(archive: Data(contentsOf: Fixtures.url("Fuzz/archive-fetched-property-cycle.keyedarchive")))
        let directory = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("Cycle.sqlite"))
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var fetchedPropertiesRead = 0
        context.performAndWait {
            for entity in model.entities where !entity.isAbstract {
                let object = ManagedObject(entity: entity, insertInto: context)
                for property in entity.propertiesByName.values {
                    _ = object.value(forKey: property.name)
                    if property is FetchedPropertyDescription { fetchedPropertiesRead += 1 }
                }
            }
        }
        #expect(fetchedPropertiesRead > 0)
    }

    // MARK: - Stores

    /// A store of the two-entity model with one object of each entity, closed.
    static func store(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Store.sqlite")
        let model = twoEntityModel()
        let container = try PersistentContainer.loaded(at: url, model: model)
        try container.viewContext.performAndWait { () throws in
            ManagedObject(entity: model.entitiesByName["Parent"]!, insertInto: container.viewContext).setValue("p", forKey: "title")
            ManagedObject(entity: model.entitiesByName["Child"]!, insertInto: container.viewContext).setValue("c", forKey: "extra")
            try container.viewContext.save()
        }
        for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        return url
    }

    @Test func aModelCacheThatInflatesBeyondTheCapIsRefusedAndInspectionDoesNotInflateIt() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        // 80 MB of zeros deflate to about 80 KB.
        let bomb = try SQLiteModelCache.deflate(Data(count: SQLiteModelCache.maximumInflatedSize + (16 << 20)))
        #expect(bomb.count < 200_000)
        let raw = try RawSQLite(url, writable: true)
        try raw.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", bomb)
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(cachedInStoreAt: url) }
        #expect(error.message.contains("inflates to more than 64 MB"))
        #expect(try StoreInspection(storeAt: url).hasModelCache)
    }

    /// Found by the store fuzzer: a byte patched into the schema made `Z_PK` a plain column, every
    /// row's key read as NULL, and the rows of a parent entity and of its sub-entity became one
    /// object — asked for the sub-entity's attributes, it trapped.
    @Test func aTableWhoseRowsAreNotKeyedByZPKIsRefused() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let raw = try RawSQLite(url, writable: true)
        let table = try #require(try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ZPARENT%'").first?.first as? String)
        let columns = try raw.rows("SELECT name FROM pragma_table_info('\(table)') WHERE name != 'Z_PK' ORDER BY cid").compactMap { $0.first as? String }
        try raw.execute("CREATE TABLE Z_COPY (Z_PK INTEGER, \(columns.joined(separator: ", ")))")
        try raw.execute("INSERT INTO Z_COPY (\(columns.joined(separator: ", "))) SELECT \(columns.joined(separator: ", ")) FROM \(table)")
        try raw.execute("DROP TABLE \(table)")
        try raw.execute("ALTER TABLE Z_COPY RENAME TO \(table)")
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: url, model: Self.twoEntityModel())
        }
        #expect(error.code == .persistentStoreInvalidType)
        #expect(error.message.contains("does not key its rows by Z_PK INTEGER PRIMARY KEY"))
        #expect(try StoreInspection(storeAt: url).entities.count == 2)   // inspecting still works
    }

    /// Found by the store fuzzer: bytes patched into `Z_PRIMARYKEY.Z_NAME` left two entities under
    /// one number; a fetch of the sub-entity returned objects of its parent, which trapped when
    /// asked for the sub-entity's attributes.
    @Test func twoEntitiesUnderOneNumberAreRefused() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let raw = try RawSQLite(url, writable: true)
        try raw.execute("UPDATE Z_PRIMARYKEY SET Z_NAME = CASE Z_NAME WHEN 'Parent' THEN 'Child' ELSE 'Gone' END")
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: url, model: Self.twoEntityModel())
        }
        #expect(error.code == .persistentStoreInvalidType)
        #expect(error.message.contains("the same number"))
    }

    /// CoreDataPlus' sample store with the store fuzzer's byte patches (offset, value), opened
    /// read-only from the model it carries.
    private static func patchedSampleStore(_ patches: [(offset: Int, value: UInt8)], in directory: TemporaryDirectory) throws -> (ManagedObjectModel, PersistentStoreCoordinator) {
        let url = try Fixtures.copy("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", into: directory)
        var bytes = [UInt8](try Data(contentsOf: url))
        for patch in patches { bytes[patch.offset] = patch.value }
        try Data(bytes).write(to: url)
        let model = try ManagedObjectModel(cachedInStoreAt: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        return (model, coordinator)
    }

    /// Found by the store fuzzer: two bytes patched into CoreDataPlus' sample store leave a row
    /// that the `Z_ENT` index lists as an ExpensiveSportCar while the table says Car; the fetch
    /// returned a Car object for ExpensiveSportCar, which trapped when asked for its attributes.
    @Test func aRowWhoseEntityDisagreesWithItsIndexIsReportedAsDamage() throws {
        let directory = TemporaryDirectory()
        let (model, coordinator) = try Self.patchedSampleStore([(20737, 173), (39948, 12)], in: directory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let error = try #require(throws: CoreDataError.self) {
            try context.performAndWait { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "ExpensiveSportCar")) }
        }
        #expect(error.code == .persistentStoreInvalidType && error.message.contains("damaged"))
        // The row read through its key is a Car: an ID that calls it an ExpensiveSportCar names
        // no object (an inaccessible fault), it does not get a Car's values.
        let key = try context.performAndWait { () throws in
            let cars = try context.fetch(FetchRequest<ManagedObject>(entityName: "Car")).filter { $0.entity.name == "Car" }
            return try #require(cars.first?.objectID.primaryKey)
        }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        try fresh.performAndWait { () throws in
            let wrong = ManagedObjectID.permanent(try #require(model.entitiesByName["ExpensiveSportCar"]), store: coordinator.persistentStores[0].identifier, primaryKey: key)
            #expect(throws: CoreDataError.self) { _ = try fresh.existingObject(with: wrong) }
        }
    }

    /// Found by the store fuzzer (2026-11-26): four bytes patched into the same sample store give
    /// its table two cells for row 3, one a Car and one an ExpensiveSportCar. Fetching Car
    /// registered the row as a Car and returned it twice; fetching ExpensiveSportCar next returned
    /// that Car object among the ExpensiveSportCars, and reading an ExpensiveSportCar attribute of
    /// it trapped. A row that comes back as an entity the object registered under its key is not
    /// is now reported as damage.
    @Test func aRowReadAsTwoEntitiesIsReportedAsDamage() throws {
        let directory = TemporaryDirectory()
        let (_, coordinator) = try Self.patchedSampleStore([(19631, 175), (24495, 37), (37120, 2), (41307, 0)], in: directory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait { () throws in
            let error = try #require(throws: CoreDataError.self) { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Car")) }
            #expect(error.code == .persistentStoreInvalidType && error.message.contains("damaged"), "\(error)")
            #expect(error.message.contains("row 3 of Car as ExpensiveSportCar"), "\(error)")
        }
        // The context keeps refusing what it read as a Car as an ExpensiveSportCar; another
        // context that reads only ExpensiveSportCars (through the index) gets objects of that entity.
        context.performAndWait {
            #expect(throws: CoreDataError.self) { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "ExpensiveSportCar")) }
            return
        }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        try fresh.performAndWait { () throws in
            let expensive = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "ExpensiveSportCar"))
            #expect(!expensive.isEmpty && expensive.allSatisfy { $0.entity.name == "ExpensiveSportCar" })
            for object in expensive { _ = object.value(forKey: "isLimitedEdition") }
        }
    }

    @Test func aCycleInTheEntityTableDoesNotHangInspection() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let raw = try RawSQLite(url, writable: true)
        // Parent's superentity becomes Child, whose superentity is Parent; and one entity its own.
        try raw.execute("UPDATE Z_PRIMARYKEY SET Z_SUPER = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Child') WHERE Z_NAME = 'Parent'")
        let inspection = try StoreInspection(storeAt: url)
        #expect(Set(inspection.entities.map(\.name)) == ["Parent", "Child"])
        try raw.execute("UPDATE Z_PRIMARYKEY SET Z_SUPER = Z_ENT")
        #expect(try StoreInspection(storeAt: url).entities.count == 2)
    }

    @Test func wrongTypedAndOutOfRangeColumnValuesReadAsSaneValues() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        do {
            let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Sample.self))
            try container.viewContext.performAndWait { () throws in
                for index in 0..<6 { Sample(context: container.viewContext).code = "c\(index)" }
                try container.viewContext.save()
            }
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
        // What another program may have written: text in numbers, numbers in text, blobs in
        // dates, values out of range, NaN and infinities, bytes that are not UTF-8 or a UUID.
        let raw = try RawSQLite(url, writable: true)
        try raw.execute("UPDATE ZSAMPLE SET ZSMALL = 'abc', ZMEDIUM = 1e300, ZLARGE = X'00FF', ZRATIO = 'x', ZTITLE = 42, ZCREATED = X'01', ZIDENTIFIER = X'0102', ZLINK = 7, ZAMOUNT = 'not a number', ZFLAG = 'yes' WHERE ZCODE = 'c0'")
        try raw.execute("UPDATE ZSAMPLE SET ZSMALL = 70000, ZMEDIUM = -1e300, ZLARGE = 9.9e18, ZRATIO = NULL, ZTITLE = CAST(X'FFFE80' AS TEXT), ZCREATED = 'yesterday', ZPAYLOAD = 'text', ZFLAG = 2 WHERE ZCODE = 'c1'")
        try raw.execute("UPDATE ZSAMPLE SET ZSMALL = 1e999, ZMEDIUM = -1e999, ZRATIO = 1e999, ZCREATED = -1e999, ZAMOUNT = 1e999 WHERE ZCODE = 'c2'")
        try raw.execute("UPDATE ZSAMPLE SET ZSMALL = NULL, ZTITLE = NULL, ZCODE = NULL, ZCREATED = NULL WHERE ZCODE = 'c3'")
        let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Sample.self))
        try container.viewContext.performAndWait { () throws in
            let samples = try container.viewContext.fetch(Sample.fetchRequest())
            #expect(samples.count == 6)
            for sample in samples {
                // Every attribute reads, through the typed accessors and through KVC.
                for attribute in sample.entity.attributesByName.keys.sorted() { _ = sample.value(forKey: attribute) }
                _ = (sample.small, sample.medium, sample.large, sample.ratio, sample.flag, sample.title, sample.created, sample.payload, sample.identifier, sample.link, sample.amount)
            }
            let sorted = Sample.fetchRequest()
            sorted.sortDescriptors = [NSSortDescriptor(key: "small", ascending: true), NSSortDescriptor(key: "title", ascending: true)]
            #expect(try container.viewContext.fetch(sorted).count == 6)
            #expect(try container.viewContext.count(for: Sample.fetchRequest()) == 6)
        }
    }

    @Test(arguments: ["garbage", "empty", "truncated", "header only"])
    func filesNamedLikeStoresThatAreNotStoresFailWithAnError(kind: String) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Broken.sqlite")
        var random = SeededGenerator(seed: 20261123)
        switch kind {
        case "garbage": try Data((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: url)
        case "empty": try Data().write(to: url)
        case "truncated": try Data(try Data(contentsOf: Self.store(in: directory)).prefix(4096 + 100)).write(to: url)
        default: try Data(Array("SQLite format 3\0".utf8) + Array(repeating: 0, count: 84)).write(to: url)
        }
        #expect(throws: (any Error).self) { _ = try ManagedObjectModel(cachedInStoreAt: url) }
        guard kind != "empty" else {
            // SQLite treats an empty file as an empty database: a store is created in it.
            #expect(try StoreInspection(storeAt: url).entities.isEmpty)
            _ = try PersistentContainer.loaded(at: url, model: Self.twoEntityModel())
            #expect(try StoreInspection(storeAt: url).entities.count == 2)
            return
        }
        #expect(throws: CoreDataError.self) { _ = try PersistentContainer.loaded(at: url, model: Self.twoEntityModel()) }
        #expect(throws: (any Error).self) { _ = try StoreInspection(storeAt: url) }
    }

    // MARK: - Predicates

    /// `lead`, then `open` 100,000 times, `inner`, and `close` as many times.
    @Test(arguments: [
        ("", "(", "a == 1", ")"),
        ("", "NOT ", "a == 1", ""),
        ("a IN ", "{", "1", "}"),
        ("", "!", "a == 1", ""),
        ("a == ", "(", "1", ")"),
    ])
    func predicatesNestedAHundredThousandDeepAreRefused(lead: String, open: String, inner: String, close: String) throws {
        let format = lead + String(repeating: open, count: 100_000) + inner + String(repeating: close, count: 100_000)
        let error = try #require(throws: CoreDataError.self) { try FetchPredicate(format: format).validate() }
        #expect(error.message.contains("nests more than \(PredicateParser.maximumDepth) levels"))
    }

    @Test func longArithmeticChainsAndSubqueryNestingAreRefused() throws {
        let chain = "a == " + Array(repeating: "1", count: 100_000).joined(separator: " + ")
        #expect(throws: CoreDataError.self) { try FetchPredicate(format: chain).validate() }
        var subquery = "a == 1"
        for level in 0..<(PredicateParser.maximumDepth + 1) { subquery = "SUBQUERY(items, $x\(level), \(subquery)).@count > 0" }
        let error = try #require(throws: CoreDataError.self) { try FetchPredicate(format: subquery).validate() }
        #expect(error.message.contains("nests more than"))
    }

    @Test func predicatesWithinTheLimitStillParseAndLongFlatOnesAreLinear() throws {
        let nested = String(repeating: "(", count: 90) + "id == 2" + String(repeating: ")", count: 90)
        let stack = try TestStack(.sqlite)
        let context = try stack.seededContext(ids: 1...3)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = FetchPredicate(format: nested)
            #expect(try context.fetch(request).map(\.id) == [2])
        }
        // 20,000 groups side by side: each look-ahead for its group's end is constant time.
        let flat = Array(repeating: "(small == 1)", count: 20_000).joined(separator: " OR ")
        #expect(throws: Never.self) { try FetchPredicate(format: flat).validate() }
    }

    // MARK: - Answers that agree

    @Test(arguments: StoreKind.allCases)
    func countAgreesWithFetchForRelationshipPredicates(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let red = Tag(context: context)
            red.name = "red"
            for index in 0..<10 {
                let memo = Memo(context: context)
                memo.body = "m\(index)"
                if index < 3 { memo.tags = [red] }
            }
            try context.save()
            for format in ["ANY tags.name == 'red'", "ANY tags.name == 'blue'", "NONE tags.name == 'red'", "SUBQUERY(tags, $t, $t.name == 'red').@count > 0",
                           "tags.@count == 0", "ALL tags.name == 'red'"] {
                let request = Memo.fetchRequest()
                request.predicate = NSPredicate(format: format)
                let fetched = try context.fetch(request).count
                #expect(try context.count(for: request) == fetched, "\(format)")
                request.fetchLimit = 2
                #expect(try context.count(for: request) == min(fetched, 2), "\(format), limit 2")
            }
        }
    }
}
