import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Key-value coding on managed objects as Core Data apps write it: key paths through
/// relationships, several keys at once, and asking whether a relationship is loaded.
@Suite(.dedicatedThread) struct KeyValueCodingTests {
    /// A drawer with a folder of two memos, one tagged, saved; and a memo without a folder.
    private func seeded(_ kind: StoreKind) throws -> (TestStack, memo: ManagedObjectID, loose: ManagedObjectID) {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        let ids = try context.performAndWait { () throws in
            let drawer = Drawer(context: context)
            drawer.label = "Desk"
            let folder = Folder(context: context)
            folder.title = "Work"
            folder.drawer = drawer
            let memo = Memo(context: context)
            memo.body = "a"
            memo.folder = folder
            let other = Memo(context: context)
            other.body = "b"
            other.folder = folder
            let tag = Tag(context: context)
            tag.name = "urgent"
            memo.tags = [tag]
            let loose = Memo(context: context)
            loose.body = "loose"
            try context.save()
            return (memo.objectID, loose.objectID)
        }
        return (stack, ids.0, ids.1)
    }

    @Test(arguments: StoreKind.allCases)
    func keyPathsFollowRelationships(kind: StoreKind) throws {
        let (stack, memoID, looseID) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let memo = try #require(try context.existingObject(with: memoID) as? Memo)
            let loose = try #require(try context.existingObject(with: looseID) as? Memo)
            #expect(memo.value(forKeyPath: "folder.title") as? String == "Work")
            #expect(memo.value(forKeyPath: "folder.drawer.label") as? String == "Desk")
            #expect(memo.value(forKeyPath: "body") as? String == "a")
            #expect(memo.value(forKeyPath: "folder.memos.body") as? Set<AnyHashable> == ["a", "b"])
            #expect(memo.value(forKeyPath: "tags.name") as? Set<AnyHashable> == ["urgent"])
            #expect(loose.value(forKeyPath: "folder.title") == nil)

            memo.setValue("Home", forKeyPath: "folder.title")
            #expect(memo.folder?.title == "Home")
            loose.setValue("Nowhere", forKeyPath: "folder.title")     // no folder: nothing to set
            #expect(loose.folder == nil && !loose.hasChanges)

            loose.setValuesForKeys(["body": "filed", "folder": memo.folder as Any])
            #expect(loose.body == "filed" && loose.folder === memo.folder)
            loose.setValuesForKeys(["folder": NSNull()])
            #expect(loose.folder == nil)
            let values = loose.dictionaryWithValues(forKeys: ["body", "folder"])
            #expect(values["body"] as? String == "filed")
            #expect(values["folder"] is NSNull)
            try context.save()
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            let memo = try #require(try check.existingObject(with: memoID) as? Memo)
            #expect(memo.folder?.title == "Home")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func hasFaultSaysWhetherARelationshipIsLoaded(kind: StoreKind) throws {
        let (stack, memoID, looseID) = try seeded(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let memo = context.object(with: memoID)
            #expect(memo.isFault)
            #expect(memo.hasFault(forRelationshipNamed: "folder"))     // the object itself is a fault
            #expect(memo.isFault)                                       // and asking fired nothing
            #expect(memo.faultingState != 0)
            _ = memo.value(forKey: "body")
            #expect(memo.faultingState == 0)                            // fully realized
            #expect(memo.hasFault(forRelationshipNamed: "tags"))        // members not loaded
            #expect(memo.hasFault(forRelationshipNamed: "folder"))      // destination not registered
            _ = memo.value(forKey: "tags")
            #expect(!memo.hasFault(forRelationshipNamed: "tags"))
            let folder = try #require(memo.value(forKey: "folder") as? Folder)
            #expect(memo.hasFault(forRelationshipNamed: "folder"))      // registered as a fault
            _ = folder.title
            #expect(!memo.hasFault(forRelationshipNamed: "folder"))
            let loose = try #require(try context.existingObject(with: looseID) as? Memo)
            #expect(!loose.hasFault(forRelationshipNamed: "folder"))    // no destination
        }
    }

    /// `validateValue(_:forKey:)` checks a value against the attribute's rules without setting
    /// it, with Core Data's codes (Owner.name: 2–20 characters matching [A-Z][a-z]*; age 0–150).
    @Test func validateValueChecksTheRulesWithoutSettingTheValue() throws {
        let stack = try TestStack(.inMemory, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let owner = Owner(context: context)
            var good: Any? = "Bea"
            try owner.validateValue(&good, forKey: "name")
            var short: AnyObject? = "x" as NSString                     // too short and not capitalised
            let both = try #require(throws: CoreDataError.self) { try owner.validateValue(&short, forKey: "name") }
            #expect(both.code == .validationMultipleErrors)
            #expect(Set(both.underlyingErrors.map(\.code)) == [.validationStringTooShort, .validationStringPatternMatching])
            var old: Any? = Int16(200)
            let large = try #require(throws: CoreDataError.self) { try owner.validateValue(&old, forKey: "age") }
            #expect(large.code == .validationNumberTooLarge)
            #expect((large as NSError).code == NSValidationNumberTooLargeError)
            var words: Any? = "many"
            #expect((try #require(throws: CoreDataError.self) { try owner.validateValue(&words, forKey: "age") }).code == .managedObjectValidation)
            var anything: Any? = 1
            #expect(throws: CoreDataError.self) { try owner.validateValue(&anything, forKey: "nope") }
            #expect(owner.name == "Ann" && owner.age == 30)             // nothing was set
        }
    }
}
