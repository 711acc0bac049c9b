import Foundation
import OpenCoreData
import Testing
import TestSupport

/// The default transformer (`NSSecureUnarchiveFromData`) reads archives with the library's own
/// bounded reader: every value Foundation's archiver writes comes back, and archives that are
/// damaged, crafted or of other classes read as nil — never a trap, a hang or an invented value.
@Suite(.dedicatedThread) struct ArchivedFoundationValueTests {
    let transformer = SecureUnarchiveFromDataTransformer()

    /// What Foundation's `NSKeyedArchiver` writes for `value`, read back by the transformer.
    func roundTrip(_ value: Any) throws -> Any? {
        let data = try #require(transformer.transformedValue(value), "the archiver refused \(value)")
        return transformer.reverseTransformedValue(data)
    }

    @Test func everyAllowedKindComesBackAsTheAppWroteIt() throws {
        #expect(try roundTrip("héllo") as? String == "héllo")
        #expect(try roundTrip(NSMutableString(string: "mutable")) as? String == "mutable")
        #expect(try roundTrip(42) as? Int == 42)
        #expect(try roundTrip(-7.25) as? Double == -7.25)
        #expect(try roundTrip(true) as? Bool == true)
        #expect(try roundTrip(Int64.min) as? Int64 == Int64.min)
        #expect(try roundTrip(NSNumber(value: UInt64.max)) as? UInt64 == UInt64.max)
        #expect(try roundTrip(Date(timeIntervalSinceReferenceDate: 123.5)) as? Date == Date(timeIntervalSinceReferenceDate: 123.5))
        #expect(try roundTrip(Data([0, 1, 2, 255])) as? Data == Data([0, 1, 2, 255]))
        #expect(try roundTrip(NSMutableData(data: Data([9, 8]))) as? Data == Data([9, 8]))
        let uuid = UUID()
        #expect(try roundTrip(uuid) as? UUID == uuid)
        #expect(try roundTrip(URL(string: "https://example.org/a?b=c")!) as? URL == URL(string: "https://example.org/a?b=c"))
        let relative = URL(string: "page", relativeTo: URL(string: "https://example.org/book/"))!
        #expect((try roundTrip(relative) as? URL)?.absoluteString == "https://example.org/book/page")
        #expect(try roundTrip(NSNull()) is NSNull)
    }

    @Test func collectionsComeBackAsSwiftCollectionsOfTheirMembers() throws {
        let array = try #require(try roundTrip(["a", 1, ["nested", 2.5]] as [Any]) as? [Any])
        #expect(array.count == 3)
        #expect(array[0] as? String == "a")
        #expect(array[1] as? Int == 1)
        #expect((array[2] as? [Any])?.first as? String == "nested")
        let set = try #require(try roundTrip(Set(["x", "y"])) as? Set<AnyHashable>)
        #expect(set == Set(["x", "y"]))
        let dictionary = try #require(try roundTrip(["name": "Ada", "born": 1815, "tags": ["math"]] as [String: Any]) as? [AnyHashable: Any])
        #expect(dictionary["name"] as? String == "Ada")
        #expect(dictionary["born"] as? Int == 1815)
        #expect(dictionary["tags"] as? [String] == ["math"])
        let numberKeys = try #require(try roundTrip([1: "one", 2: "two"] as NSDictionary) as? [AnyHashable: Any])
        #expect(numberKeys[AnyHashable(NSNumber(value: 1))] as? String == "one")
    }

    // MARK: - Hostile archives

    /// A keyed archive of the given `$objects` (index 0 is `$null`, so the first is 1).
    static func archive(_ objects: [PropertyListValue], root: Int = 1) -> Data {
        BinaryPropertyListWriter.data(.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(root)]), "$objects": .array([.string("$null")] + objects),
        ]))
    }

    static func classInfo(_ name: String) -> PropertyListValue {
        .dictionary(["$classname": .string(name), "$classes": .array([.string(name), .string("NSObject")])])
    }

    /// Found by `Fuzz/run store` (kept in Tests/Fixtures/Fuzz): a fixture store's archived
    /// `Content` with a few bytes changed, on which Foundation's `NSKeyedUnarchiver` traps.
    @Test func theFuzzedArchiveOnWhichFoundationTrappedReadsAsNil() throws {
        let data = try Data(contentsOf: Fixtures.url("Fuzz/store-transformable-trap.keyedarchive"))
        #expect(transformer.reverseTransformedValue(data) == nil)
    }

    /// From the same input: an archive that Foundation's unarchiver reads as a dictionary of its
    /// own internal UID objects — a value nobody wrote.
    @Test func anArchiveOfAnotherClassIsNotReadAsAnInventedDictionary() throws {
        let data = try Data(contentsOf: Fixtures.url("Fuzz/store-transformable-uid-fields.keyedarchive"))
        #expect(transformer.reverseTransformedValue(data) == nil)
        // A class outside the allowed ones, even one that says it descends from NSArray.
        let lying = Self.archive([
            .dictionary(["$class": .uid(2), "NS.objects": .array([])]),
            .dictionary(["$classname": .string("Evil"), "$classes": .array([.string("Evil"), .string("NSArray"), .string("NSObject")])]),
        ])
        #expect(transformer.reverseTransformedValue(lying) == nil)
    }

    /// Found by `Fuzz/run transformable` (kept in Tests/Fixtures/Fuzz): one dictionary, keyed by a
    /// date of NaN seconds, twice in an array. Read, it made Foundation's archiver trap when the
    /// value was saved again; a NaN date is now damage.
    @Test func theFuzzedArchiveWithNaNDateKeysReadsAsNil() throws {
        let data = try Data(contentsOf: Fixtures.url("Fuzz/transformable-nan-date-keys.keyedarchive"))
        #expect(transformer.reverseTransformedValue(data) == nil)
    }

    @Test func anArrayThatContainsItselfReadsAsNil() {
        let data = Self.archive([.dictionary(["$class": .uid(2), "NS.objects": .array([.uid(1)])]), Self.classInfo("NSArray")])
        #expect(transformer.reverseTransformedValue(data) == nil)
    }

    @Test func arraysNestedAHundredThousandDeepReadAsNilAndTwoHundredDeepAreRead() throws {
        func nested(_ depth: Int) -> Data {
            // Object 1 is the class; objects 2… each hold the next; the last holds a string.
            var objects: [PropertyListValue] = [Self.classInfo("NSArray")]
            for level in 0..<depth { objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array([.uid(level + 3)])])) }
            objects.append(.string("leaf"))
            return Self.archive(objects, root: 2)
        }
        #expect(transformer.reverseTransformedValue(nested(100_000)) == nil)
        var value = try #require(transformer.reverseTransformedValue(nested(200)))
        for _ in 0..<200 { value = try #require((value as? [Any])?.first) }
        #expect(value as? String == "leaf")
    }

    @Test func membersSharedSoThatExpandingThemWouldExplodeReadAsNil() {
        // Forty arrays, each holding the next twice: 2^40 leaves if expanded.
        var objects: [PropertyListValue] = []
        for level in 0..<40 { objects.append(.dictionary(["$class": .uid(42), "NS.objects": .array([.uid(level + 2), .uid(level + 2)])])) }
        objects.append(.string("leaf"))
        objects.append(Self.classInfo("NSArray"))
        // Compared apart: were it read, describing it in a failure would expand it.
        let isRefused = transformer.reverseTransformedValue(Self.archive(objects)) == nil
        #expect(isRefused)
    }

    @Test func objectsSharedAsArchiversShareThemAreReadOnce() throws {
        // One date object referred to by a thousand members (NSKeyedArchiver writes an object once).
        let data = Self.archive([
            .dictionary(["$class": .uid(2), "NS.objects": .array(Array(repeating: .uid(3), count: 1_000))]), Self.classInfo("NSArray"),
            .dictionary(["$class": .uid(4), "NS.time": .real(60)]), Self.classInfo("NSDate"),
        ])
        let dates = try #require(transformer.reverseTransformedValue(data) as? [Date])
        #expect(dates.count == 1_000)
        #expect(Set(dates) == [Date(timeIntervalSinceReferenceDate: 60)])
    }

    @Test func damagedFieldsReadAsNil() {
        let cases: [[PropertyListValue]] = [
            [.dictionary(["$class": .uid(2), "NS.time": .string("soon")]), Self.classInfo("NSDate")],
            [.dictionary(["$class": .uid(2), "NS.time": .real(.nan)]), Self.classInfo("NSDate")],
            [.date(.nan)],
            [.dictionary(["$class": .uid(2), "NS.uuidbytes": .data(Data([1, 2, 3]))]), Self.classInfo("NSUUID")],
            [.dictionary(["$class": .uid(2), "NS.keys": .array([.uid(3)]), "NS.objects": .array([])]), Self.classInfo("NSDictionary"), .string("k")],
            [.dictionary(["$class": .uid(2), "NS.objects": .array([.uid(0)])]), Self.classInfo("NSArray")],
            [.dictionary(["$class": .uid(2), "NS.relative": .integer(3), "NS.base": .uid(0)]), Self.classInfo("NSURL")],
            [.dictionary(["$class": .uid(9)])],
            [.array([])],
        ]
        for objects in cases { #expect(transformer.reverseTransformedValue(Self.archive(objects)) == nil, "\(objects)") }
        #expect(transformer.reverseTransformedValue(Data("not an archive".utf8)) == nil)
    }

    /// Through a store: the damaged value of one object reads as nil, its other values and the
    /// other objects are read (what `ocd dump` does over a store copied off a device).
    @Test func aDamagedValueInAStoreReadsAsNilThroughValueForKey() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Values.sqlite")
        let entity = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "payload", type: .transformable),
        ])
        let model = ManagedObjectModel(entities: [entity])
        let container = try PersistentContainer.loaded(at: url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for name in ["good", "bad"] {
                let item = ManagedObject(entity: entity, insertInto: context)
                item.setValue(name, forKey: "name")
                item.setValue(["kept": name], forKey: "payload")
            }
            try context.save()
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        let crafted = try Data(contentsOf: Fixtures.url("Fuzz/store-transformable-trap.keyedarchive"))
        try RawSQLite(url, writable: true).execute("UPDATE ZITEM SET ZPAYLOAD = ? WHERE ZNAME = 'bad'", crafted)
        let reopened = try PersistentContainer.loaded(at: url, model: model)
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            let items = try check.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            let byName = Dictionary(uniqueKeysWithValues: items.compactMap { item in (item.value(forKey: "name") as? String).map { ($0, item) } })
            #expect(byName.count == 2)
            #expect(try #require(byName["bad"]).value(forKey: "payload") == nil)
            #expect((try #require(byName["good"]).value(forKey: "payload") as? [AnyHashable: Any])?["kept"] as? String == "good")
        }
    }
}
