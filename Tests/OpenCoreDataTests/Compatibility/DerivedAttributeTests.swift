import Foundation
import OpenCoreData
import Testing

/// Stores Core Data wrote with derived attributes keep them current with `Z_DA_…` triggers.
@Suite struct DerivedAttributeTests {
    /// A book whose `pagesCount` is `pages.@count`, as Xcode writes it.
    static let model = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Book" representedClassName="NSManagedObject">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="pagesCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="pages.@count" usesScalarValueType="YES"/>
            <relationship name="pages" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="book" inverseEntity="Page"/>
        </entity>
        <entity name="Page" representedClassName="NSManagedObject">
            <attribute name="number" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
            <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/>
        </entity>
    </model>
    """

    @Test func aCountDerivedInAStoreWeCreateFollowsItsRelationship() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("contents")
        try Data(Self.model.utf8).write(to: file)
        let model = try ManagedObjectModel(contentsOf: file, version: nil)
        let container = try PersistentContainer.loaded(at: directory.file("Books.sqlite"), model: model)
        let context = container.newBackgroundContext()
        func counts() throws -> [String: Int64] {
            let reader = container.newBackgroundContext()
            return try reader.performAndWait {
                Dictionary(uniqueKeysWithValues: try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book")).map {
                    ($0.value(forKey: "title") as? String ?? "", $0.value(forKey: "pagesCount") as? Int64 ?? -1)
                })
            }
        }
        let (first, second) = try context.performAndWait { () throws in
            let books = ["first", "second"].map { title in
                let book = ManagedObject(entity: model.entitiesByName["Book"]!, insertInto: context)
                book.setValue(title, forKey: "title")
                return book
            }
            for number in 0..<3 {
                let page = ManagedObject(entity: model.entitiesByName["Page"]!, insertInto: context)
                page.setValue(Int32(number), forKey: "number")
                page.setValue(books[0], forKey: "book")
            }
            try context.save()
            return (books[0], books[1])
        }
        #expect(try counts() == ["first": 3, "second": 0])
        try context.performAndWait { () throws in
            let pages = (first.value(forKey: "pages") as? Set<ManagedObject> ?? []).sorted { ($0.value(forKey: "number") as? Int32 ?? 0) < ($1.value(forKey: "number") as? Int32 ?? 0) }
            pages[0].setValue(second, forKey: "book")        // moved
            context.delete(pages[1])                          // deleted
            try context.save()
        }
        #expect(try counts() == ["first": 1, "second": 1])
        // A batch delete runs the same triggers.
        try context.performAndWait { () throws in
            _ = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Page")))
        }
        #expect(try counts() == ["first": 0, "second": 0])
    }

    /// CoreDataPlus' sample store: `Book.pagesCount` is `count:(pages)`, kept by triggers on ZPAGE.
    static let store = "coredataplus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"

    @Test func anAppleStoreWithDerivedAttributesCanBeWrittenAndItsCountsFollow() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy(Self.store, into: directory)
        let model = try ManagedObjectModel(cachedInStoreAt: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSPersistentHistoryTrackingKey: true])
        func pagesCount(ofBook id: ManagedObjectID) throws -> Int64? {
            let reader = ManagedObjectContext(concurrencyType: .privateQueue)
            reader.persistentStoreCoordinator = coordinator
            return try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "pagesCount") as? Int64 }
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let (bookID, pageID) = try context.performAndWait { () throws in
            let book = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")).first)
            let existing = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Page")).first)
            let page = ManagedObject(entity: try #require(model.entitiesByName["Page"]), insertInto: context)
            page.setValue(Int32(1_000), forKey: "number")
            page.setValue(false, forKey: "isBookmarked")
            page.setValue(existing.value(forKey: "content"), forKey: "content")
            page.setValue(book, forKey: "book")
            try context.save()      // the triggers call Core Data's functions: they must exist
            return (book.objectID, page.objectID)
        }
        #expect(try pagesCount(ofBook: bookID) == 100)
        try context.performAndWait { () throws in
            context.delete(context.object(with: pageID))
            try context.save()
        }
        #expect(try pagesCount(ofBook: bookID) == 99)
    }
}
