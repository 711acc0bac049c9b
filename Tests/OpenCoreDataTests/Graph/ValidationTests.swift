import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ValidationTests {
    private func saveError(_ configure: @escaping (ManagedObjectContext) -> Void) throws -> CoreDataError {
        let stack = try TestStack(.inMemory, model: graphModel())
        let context = stack.container.newBackgroundContext()
        return try context.performAndWait { () throws in
            configure(context)
            return try #require(throws: CoreDataError.self) { try context.save() }
        }
    }

    /// A model file's bounds come as text, and `Double()` reads `1e19`, `inf` and `nan`: a string
    /// length bound outside 0…2^53 or not whole, and a number bound that is not finite, are refused
    /// when the model loads (every save of the entity used to trap converting them to `Int`).
    @Test(arguments: [("String", "minValueString", "1e19"), ("String", "maxValueString", "inf"), ("String", "minValueString", "-inf"),
                      ("String", "maxValueString", "-1"), ("String", "maxValueString", "2.5"), ("Double", "maxValueString", "nan"),
                      ("Integer 32", "minValueString", "-inf")])
    func boundsThatAreNotNumbersOfTheirKindAreRefusedWhenTheModelLoads(type: String, bound: String, value: String) throws {
        let directory = TemporaryDirectory()
        let bundle = directory.file("Bounds.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Item" representedClassName="Item" syncable="YES" codeGenerationType="class">
                <attribute name="value" optional="YES" attributeType="\(type)" \(bound)="\(value)"/>
            </entity>
        </model>
        """
        try Data(xml.utf8).write(to: bundle.appendingPathComponent("contents"))
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: directory.file("Bounds.sqlite"), model: ManagedObjectModel(contentsOf: bundle, version: nil))
        }
        #expect(error.code == .coreData)
        #expect(error.message.contains("attribute value of the entity Item"))
    }

    @Test func aMandatoryToOneWithoutDestinationIs1570() throws {
        let error = try saveError { context in _ = Pet(context: context) }
        #expect(error.code == .validationMissingMandatoryProperty)
        #expect(error.key == "owner")
    }

    @Test func boundsAndPatternsHaveCoreDatasCodes() throws {
        func code(_ change: @escaping (Owner) -> Void) throws -> CoreDataError.Code {
            try saveError { context in change(Owner(context: context)) }.code
        }
        #expect(try code { $0.age = 151 } == .validationNumberTooLarge)
        #expect(try code { $0.age = -1 } == .validationNumberTooSmall)
        #expect(try code { $0.name = "A" + String(repeating: "a", count: 20) } == .validationStringTooLong)
        #expect(try code { $0.name = "A" } == .validationStringTooShort)
        #expect(try code { $0.name = "lowercase" } == .validationStringPatternMatching)
        #expect(try code { $0.since = Date(timeIntervalSinceReferenceDate: -1) } == .validationDateTooSoon)
    }

    @Test func relationshipCountsAreChecked() throws {
        let error = try saveError { context in
            let owner = Owner(context: context)
            for _ in 0..<4 { Pet(context: context).owner = owner }
        }
        #expect(error.code == .validationRelationshipExceedsMaximumCount)
        #expect(error.key == "pets")
    }

    /// The error of a save with three invalid values: an age too large, a name against its
    /// pattern, a pet without its mandatory owner.
    private func threeErrors() throws -> CoreDataError {
        try saveError { context in
            let owner = Owner(context: context)
            owner.age = 200
            owner.name = "xy"
            _ = Pet(context: context)
        }
    }

    @Test func severalErrorsComeTogetherAs1560() throws {
        let error = try threeErrors()
        #expect(error.code == .validationMultipleErrors)
        #expect(Set(error.underlyingErrors.map(\.code)) == [.validationNumberTooLarge, .validationStringPatternMatching, .validationMissingMandatoryProperty])
    }

    /// Code written against `NSError` (Core Data's domain, codes and `userInfo` keys) reads the same
    /// error.
    @Test func validationErrorsReadAsCoreDatasNSErrors() throws {
        let thrown = try threeErrors()
        let error = thrown as NSError
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSValidationMultipleErrorsError)
        #expect(error.localizedDescription == thrown.message)
        let detailed = try #require(error.userInfo[NSDetailedErrorsKey] as? [NSError])
        #expect(Set(detailed.map(\.code)) == [NSValidationNumberTooLargeError, NSValidationStringPatternMatchingError, NSValidationMissingMandatoryPropertyError])
        #expect(Set(detailed.compactMap { $0.userInfo[NSValidationKeyErrorKey] as? String }) == ["age", "name", "owner"])
    }

    @Test func validObjectsSave() throws {
        let stack = try TestStack(.inMemory, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let owner = Owner(context: context)
            owner.name = "Bea"
            Pet(context: context).owner = owner
            try context.save()
        }
    }
}

/// A subclass check runs with the built-in ones.
@Managed
final class Ticket: ManagedObject {
    var seats: Int32 = 1

    override func validateForInsert() throws {
        try super.validateForInsert()
        if seats > 8 { throw CoreDataError(.managedObjectValidation, "A ticket holds at most 8 seats.", key: "seats", affectedObjectIDs: [objectID]) }
    }
}

@Suite(.dedicatedThread) struct CustomValidationTests {
    @Test func overriddenValidateForInsertRunsAtSave() throws {
        let stack = try TestStack(.inMemory, model: ManagedObjectModel(Ticket.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            Ticket(context: context).seats = 9
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.message == "A ticket holds at most 8 seats.")
        }
    }

    /// SQLite stores NaN as NULL, so a saved NaN would read back as 0 or nil: saves and batch
    /// requests refuse it (in every store, so that both answer alike), infinities round-trip.
    @Test(arguments: StoreKind.allCases) func nanIsRefusedAndInfinitiesRoundTrip(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Probe.self, Label.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let probe = Probe(context: context)
            probe.code = "p"
            let nans: [(key: String, set: (Probe) -> Void)] = [
                ("ratio", { $0.ratio = .nan }), ("amount", { $0.amount = .nan }),
                ("created", { $0.created = Date(timeIntervalSinceReferenceDate: .nan) }),
            ]
            for (key, set) in nans {
                set(probe)
                let error = try #require(throws: CoreDataError.self) { try context.save() }
                #expect(error.code == .managedObjectValidation)
                #expect(error.key == key)
                #expect(error.message.contains("NaN"))
                probe.ratio = 0
                probe.amount = 0
                probe.created = Date(timeIntervalSinceReferenceDate: 0)
            }
            probe.ratio = -.infinity
            try context.save()

            let insert = BatchInsertRequest(entityName: "Probe", objects: [["code": "q", "ratio": Double.nan]])
            #expect((try #require(throws: CoreDataError.self) { try context.execute(insert) }).key == "ratio")
            let update = BatchUpdateRequest(entityName: "Probe", predicate: nil, propertiesToUpdate: ["ratio": Double.nan])
            #expect((try #require(throws: CoreDataError.self) { try context.execute(update) }).key == "ratio")

            context.reset()
            let stored = try context.fetch(Probe.fetchRequest())
            #expect(stored.map(\.code) == ["p"])
            #expect(stored.first?.ratio == -.infinity)
        }
    }
}
