import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Changing a to-many relationship that was never loaded reads its members first. When that read
/// fails (an I/O error, a lost PostgreSQL connection; here the destination table is away), the
/// change is not made, nothing traps, and the context's next save throws the store's error; a
/// failed read is never taken for "no members" (which would unlink every member on the next try).
@Suite(.dedicatedThread) struct UnreadableRelationshipTests {
    /// A folder of two memos in a store, fetched in a fresh context with its memos unloaded, and
    /// the store's memo table renamed away so that reading them fails.
    func folderWhoseMemosCannotBeRead(in directory: TemporaryDirectory) throws -> (PersistentContainer, ManagedObjectContext, Folder) {
        let url = directory.file("Graph.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: graphModel())
        let writer = container.newBackgroundContext()
        try writer.performAndWait { () throws in
            let folder = Folder(context: writer)
            folder.title = "inbox"
            for body in ["a", "b"] {
                let memo = Memo(context: writer)
                memo.body = body
                memo.folder = folder
            }
            try writer.save()
        }
        let context = container.newBackgroundContext()
        let folder = try context.performAndWait { () throws in try #require(try context.fetch(Folder.fetchRequest()).first) }
        try RawSQLite(url, writable: true).execute("ALTER TABLE ZMEMO RENAME TO ZMEMO_AWAY")
        return (container, context, folder)
    }

    func restore(_ directory: TemporaryDirectory) throws {
        try RawSQLite(directory.file("Graph.sqlite"), writable: true).execute("ALTER TABLE ZMEMO_AWAY RENAME TO ZMEMO")
    }

    func memoCount(ofFolderTitled title: String, _ directory: TemporaryDirectory) throws -> Int64? {
        try RawSQLite(directory.file("Graph.sqlite")).rows("SELECT COUNT(*) FROM ZMEMO m JOIN ZFOLDER f ON m.ZFOLDER = f.Z_PK WHERE f.ZTITLE = '\(title)'").first?.first as? Int64
    }

    @Test func settingAnUnreadableToManyChangesNothingAndTheNextSaveThrows() throws {
        let directory = TemporaryDirectory()
        let (_, context, folder) = try folderWhoseMemosCannotBeRead(in: directory)
        try context.performAndWait { () throws in
            let memo = Memo(context: context)
            folder.memos = [memo]                       // trapped before
            #expect(memo.folder == nil)
            #expect(throws: CoreDataError.self) { try context.save() }
        }
        try restore(directory)
        #expect(try memoCount(ofFolderTitled: "inbox", directory) == 2)
        // Once the store reads again, the same change works.
        try context.performAndWait { () throws in
            let memo = Memo(context: context)
            folder.memos = [memo]
            try context.save()
        }
        #expect(try memoCount(ofFolderTitled: "inbox", directory) == 1)
    }

    @Test func removingEveryMemberOfAnUnreadableToManyDoesNotEmptyIt() throws {
        let directory = TemporaryDirectory()
        let (_, context, folder) = try folderWhoseMemosCannotBeRead(in: directory)
        try context.performAndWait { () throws in
            folder.mutableSetValue(forKey: "memos").removeAllObjects()    // needs the members: not done
            #expect(throws: CoreDataError.self) { try context.save() }
        }
        try restore(directory)
        #expect(try memoCount(ofFolderTitled: "inbox", directory) == 2)
    }

    @Test func addingThroughTheMutableSetNeedsNoReadAndIsSavedOnceTheStoreWorks() throws {
        let directory = TemporaryDirectory()
        let (_, context, folder) = try folderWhoseMemosCannotBeRead(in: directory)
        try context.performAndWait { () throws in
            let memo = Memo(context: context)
            memo.body = "c"
            folder.mutableSetValue(forKey: "memos").add(memo)
            #expect(memo.folder == folder)
        }
        try restore(directory)
        try context.performAndWait { () throws in try context.save() }
        #expect(try memoCount(ofFolderTitled: "inbox", directory) == 3)
    }
}
