import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Stores Core Data wrote with derived attributes keep them current with `Z_DA_…` triggers.
@Suite(.dedicatedThread) struct DerivedAttributeTests {
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

    /// The stores that keep derivations across relationships with triggers (the in-memory store
    /// computes them when their object is saved).
    static var storesWithTriggers: [StoreKind] { StoreKind.allCases.filter { $0 != .inMemory } }

    @Test(arguments: storesWithTriggers)
    func aCountDerivedInAStoreWeCreateFollowsItsRelationship(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let file = directory.file("contents")
        try Data(Self.model.utf8).write(to: file)
        let model = try ManagedObjectModel(contentsOf: file, version: nil)
        let container = try TestStack(kind, model: model, directory: directory).container
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

    /// Derivations computed when an object is saved, as Xcode writes them.
    static let computedModel = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Book" representedClassName="NSManagedObject">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="searchTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
            <attribute name="modified" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>
            <attribute name="authorName" optional="YES" attributeType="String" derived="YES" derivationExpression="author.name"/>
            <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
        </entity>
        <entity name="Author" representedClassName="NSManagedObject">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
        </entity>
    </model>
    """

    @Test(arguments: StoreKind.allCases)
    func nowCanonicalAndKeyPathDerivationsAreComputedWhenSaved(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let file = directory.file("contents")
        try Data(Self.computedModel.utf8).write(to: file)
        let model = try ManagedObjectModel(contentsOf: file, version: nil)
        #expect(model.unsupportedFeatures.isEmpty, "\(model.unsupportedFeatures)")
        let container = try TestStack(kind, model: model, directory: directory, name: "Computed").container
        let context = container.newBackgroundContext()
        let before = Date()
        let (book, author) = try context.performAndWait { () throws in
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue("Ann Leckie", forKey: "name")
            let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
            book.setValue("Élan Vital", forKey: "title")
            book.setValue(author, forKey: "author")
            try context.save()
            // The saving context holds the computed values at once.
            #expect(book.value(forKey: "searchTitle") as? String == "elan vital")
            #expect(book.value(forKey: "authorName") as? String == "Ann Leckie")
            #expect((book.value(forKey: "modified") as? Date).map { $0 >= before.addingTimeInterval(-1) } == true)
            #expect(!context.hasChanges)
            return (book.objectID, author.objectID)
        }
        func stored(_ key: String) throws -> Any? {
            let reader = container.newBackgroundContext()
            return try reader.performAndWait { try reader.existingObject(with: book).value(forKey: key) }
        }
        #expect(try stored("searchTitle") as? String == "elan vital")
        let firstSave = try #require(try stored("modified") as? Date)
        // A later save of the book recomputes them.
        Thread.sleep(forTimeInterval: 0.01)
        try context.performAndWait { () throws in
            try context.existingObject(with: book).setValue("Ancillary JUSTICE", forKey: "title")
            try context.save()
        }
        #expect(try stored("searchTitle") as? String == "ancillary justice")
        #expect(try #require(try stored("modified") as? Date) > firstSave)
        if kind != .inMemory {
            // The copy follows the author's name when only the author is saved (the store's
            // trigger); the book's version does not move.
            try context.performAndWait { () throws in
                try context.existingObject(with: author).setValue("A. Leckie", forKey: "name")
                try context.save()
            }
            #expect(try stored("authorName") as? String == "A. Leckie")
            try context.performAndWait { () throws in
                let saved = try context.existingObject(with: book)
                context.refresh(saved, mergeChanges: false)
                #expect(saved.value(forKey: "authorName") as? String == "A. Leckie")
                // And the relationship: a book without an author has no author name.
                saved.setValue(nil, forKey: "author")
                try context.save()
                #expect(saved.value(forKey: "authorName") == nil)
            }
            #expect(try stored("authorName") == nil)
        }
    }
}
