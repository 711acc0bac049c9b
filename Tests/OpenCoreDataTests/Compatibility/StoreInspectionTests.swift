import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// `StoreInspection` (behind `ocd inspect`) reads any store, with or without a model.
@Suite(.dedicatedThread) struct StoreInspectionTests {
    @Test func anAppleStoreWithHistory() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("coredataplus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory)
        let inspection = try StoreInspection(storeAt: url)
        let db = try RawSQLite(url)
        #expect(inspection.metadata[NSStoreUUIDKey] as? String == "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")
        #expect(inspection.hasModelCache)
        #expect(inspection.entities.map(\.name) == ["Book", "GraphicNovel", "Feedback", "Page", "Writer", "Author"])
        for entity in inspection.entities {
            let rows = try db.rows("SELECT COUNT(*) FROM \(entity.table) WHERE Z_ENT = \(entity.number)")[0][0] as? Int64
            #expect(entity.rowCount == Int(rows ?? -1), "\(entity.name)")
        }
        #expect(inspection.entities.first { $0.name == "GraphicNovel" }?.superentityName == "Book")
        #expect(inspection.entities.first { $0.name == "Author" }?.table == "ZWRITER")
        #expect(inspection.history?.changeCount == 5468)
        #expect(inspection.history?.transactionCount == Int(try db.rows("SELECT COUNT(*) FROM ATRANSACTION")[0][0] as! Int64))
        #expect(inspection.tables.first { $0.name == "ZPAGE" }?.rowCount == 4970)
    }

    @Test func aStoreWithoutAModelStillListsItsEntitiesAndTables() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("bookmigration-mhw/BookMigration-master/BookMigration/Model1.sqlite", into: directory)
        let inspection = try StoreInspection(storeAt: url)
        #expect(!inspection.hasModelCache)
        #expect(inspection.entities.map { "\($0.name) \($0.rowCount)" } == ["Book 4", "User 3"])
        #expect(inspection.history == nil)
        #expect(inspection.metadata["NSPersistenceFrameworkVersion"] as? Int == 419)
    }

    /// A store we wrote, SQLite file or PostgreSQL schema: its entities, tables, metadata and
    /// history, with the authors Core Data keeps in `ATRANSACTIONSTRING`.
    @Test(arguments: StoreKind.allCases.filter { $0 != .inMemory })
    func aStoreWeWroteWithHistoryListsItsEntitiesAndAuthors(kind: StoreKind) throws {
        let stack = try TestStack(kind, options: [NSPersistentHistoryTrackingKey: true])
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (author, ids) in [("importer", 1...2), ("editor", 3...3)] {
                context.transactionAuthor = author
                for id in ids { Note(context: context).id = Int32(id) }
                try context.save()
            }
        }
        let store = try #require(stack.container.persistentStoreCoordinator.persistentStores.first)
        let url = try #require(store.url)
        let inspection = kind == .postgreSQL ? try StoreInspection(postgreSQLStoreAt: url) : try StoreInspection(storeAt: url)
        #expect(inspection.metadata[NSStoreUUIDKey] as? String == store.identifier)
        #expect(inspection.hasModelCache)
        #expect(inspection.entities.map { "\($0.name) \($0.rowCount) \($0.table)" }.sorted() == ["Note 3 ZNOTE", "Sample 0 ZSAMPLE"])
        #expect(inspection.tables.first { $0.name == "ZNOTE" }?.rowCount == 3)
        #expect(inspection.tables.contains { $0.name == "Z_PRIMARYKEY" })
        #expect(inspection.history?.transactionCount == 2)
        #expect(inspection.history?.changeCount == 3)
        #expect(inspection.history?.authors == ["editor", "importer"])
    }

    @Test func aFileThatIsNotAStoreIsAnError() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("notes.txt")
        try Data("hello".utf8).write(to: file)
        #expect(throws: CoreDataError.self) { try StoreInspection(storeAt: file) }
        #expect(throws: CoreDataError.self) { try StoreInspection(storeAt: directory.file("missing.sqlite")) }
    }
}
