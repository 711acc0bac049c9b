import Foundation
import OpenCoreData
import Testing

/// Stores Core Data wrote with derived attributes keep them current with `Z_DA_…` triggers.
@Suite struct DerivedAttributeTests {
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
