#if os(Linux)
import CoreData
import Foundation
import Testing
import TestSupport

/// `BookmarkEntity` (in `Generated/`) is `ocd codegen … --module CoreData`'s output for the
/// Bookmarks model of DuckDuckGo's BrowserServicesKit: a file that imports `CoreData`, built on
/// Linux only. It opens the store Core Data wrote with that model, as the app's own generated
/// class would on Apple platforms.
@Suite(.dedicatedThread) struct GeneratedClassesTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ddg-bsk/Tests/BookmarksTests/Resources")

    @Test func theGeneratedClassOpensTheStoreCoreDataWrote() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-generated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for suffix in ["", "-wal", "-shm"] {
            let source = Self.fixtures.appendingPathComponent("Bookmarks_V5.sqlite" + suffix)
            if FileManager.default.fileExists(atPath: source.path) {
                try FileManager.default.copyItem(at: source, to: directory.appendingPathComponent("Bookmarks.sqlite" + suffix))
            }
        }
        let container = NSPersistentContainer(name: "Bookmarks", managedObjectModel: NSManagedObjectModel(BookmarkEntity.self))
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.appendingPathComponent("Bookmarks.sqlite"))]
        try container.loadPersistentStores()
        let context = container.viewContext
        try context.performAndWait { () throws in
            let request: NSFetchRequest<BookmarkEntity> = BookmarkEntity.fetchRequest()
            request.predicate = NSPredicate(format: "uuid == %@", "bookmarks_root")
            let root = try #require(try context.fetch(request).first)
            #expect(root.isFolder)
            #expect(!root.children.isEmpty)
            #expect(root.children.allSatisfy { $0.parent === root })
        }
    }
}
#endif
