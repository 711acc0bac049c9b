import Foundation
import OpenCoreData
import Testing
import TestSupport

/// `Author` and `Book` are not written here: the `ModelCodegen` plugin writes them from
/// `Library.xcdatamodeld` on each build, as Xcode's code generation does for an app.
@Suite(.dedicatedThread) struct ModelCodegenPluginTests {
    static func fileModel() throws -> ManagedObjectModel {
        let url = try #require(Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld"))
        return try ManagedObjectModel(contentsOf: url, version: nil)
    }

    @Test func theGeneratedClassesHaveTheModelFilesHashes() throws {
        let classes = ManagedObjectModel(Author.self, Book.self)
        #expect(classes.entityVersionHashesByName == (try Self.fileModel()).entityVersionHashesByName)
    }

    @Test func theGeneratedClassesHaveXcodesPropertyTypesAndTheModelsRules() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-plugin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = PersistentContainer(name: "Library", managedObjectModel: ManagedObjectModel(Author.self, Book.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.appendingPathComponent("Library.sqlite"))]
        try container.loadPersistentStores()
        let context = container.viewContext
        try context.performAndWait { () throws in
            let author = Author(context: context)
            #expect(author.name == "Anonymous")          // the model's default, in a String? as Xcode declares it
            let book = Book(context: context)
            book.isbn = "978-0"
            book.author = author
            let pages: Int32 = book.pages                // a scalar, as "Use Scalar Type" asks
            let rating: Double? = book.rating            // NSNumber? in Xcode: an optional here
            #expect(pages == 0 && rating == nil)
            // The title is mandatory in the model although the property is optional.
            let missing = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(missing?.code.rawValue == 1570)
            book.title = "Dune"
            book.tags = ["classic", "sf"]
            try context.save()
            // The ISBN is unique.
            let copy = Book(context: context)
            copy.isbn = "978-0"
            copy.title = "Dune, again"
            copy.author = author
            let clash = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(clash?.code.rawValue == 133021)
            context.delete(copy)
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = Book.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(keyPath: \Book.title, ascending: true)]
            let books = try reader.fetch(request)
            #expect(books.map(\.title) == ["Dune"])
            #expect(books.first?.tags as? [String] == ["classic", "sf"])
            #expect(books.first?.author?.books.count == 1)
        }
    }
}
