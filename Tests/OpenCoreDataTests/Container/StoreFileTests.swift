import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Whole-store operations: destroy, replace, metadata.
@Suite(.dedicatedThread) struct StoreFileTests {
    private func notes(at url: URL, count: Int) throws {
        let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Note.self))
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for id in 0..<count { Note(context: context).id = Int32(id) }
            try context.save()
        }
    }

    private func count(at url: URL) throws -> Int {
        let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Note.self))
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.count(for: Note.fetchRequest()) }
    }

    private func uuid(at url: URL) throws -> String? {
        try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)[NSStoreUUIDKey] as? String
    }

    @Test func destroyingAStoreEmptiesItAndRemovesItFromItsCoordinator() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Destroyed.sqlite")
        try notes(at: url, count: 3)
        let before = try uuid(at: url)
        let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Note.self))
        let coordinator = container.persistentStoreCoordinator
        try coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType, options: nil)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(FileManager.default.fileExists(atPath: url.path))
        #expect(throws: CoreDataError.self) { _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url) }
        // Added again: a new, empty store.
        #expect(try count(at: url) == 0)
        #expect(try uuid(at: url) != before)
        // Nothing there: nothing to do.
        try coordinator.destroyPersistentStore(at: directory.file("Never.sqlite"), type: .sqlite)
        #expect(!FileManager.default.fileExists(atPath: directory.file("Never.sqlite").path))
    }

    @Test func replacingAStoreCopiesObjectsAndIdentity() throws {
        let directory = TemporaryDirectory()
        let source = directory.file("Seed.sqlite")
        let destination = directory.file("Live.sqlite")
        try notes(at: source, count: 3)
        try notes(at: destination, count: 1)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(Note.self))
        try coordinator.replacePersistentStore(at: destination, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil, ofType: NSSQLiteStoreType)
        #expect(try count(at: destination) == 3)
        #expect(try uuid(at: destination) == (try uuid(at: source)))
        // Into a new file too.
        let fresh = directory.file("Fresh.sqlite")
        try coordinator.replacePersistentStore(at: fresh, withPersistentStoreFrom: source, type: .sqlite)
        #expect(try count(at: fresh) == 3)

        // Refused: a destination open here, a source that is no store.
        try coordinator.addPersistentStore(type: .sqlite, at: destination)
        let open = try #require(throws: CoreDataError.self) {
            try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .sqlite)
        }
        #expect(open.message.contains("remove it"))
        let junk = directory.file("Junk.sqlite")
        try Data("not a database".utf8).write(to: junk)
        #expect(throws: CoreDataError.self) { try coordinator.replacePersistentStore(at: fresh, withPersistentStoreFrom: junk, type: .sqlite) }
        #expect(try count(at: fresh) == 3)
    }

    @Test func metadataKeepsTheStoresOwnKeys() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Meta.sqlite")
        try notes(at: url, count: 2)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url) as [String: Any]
        let hashes = metadata["NSStoreModelVersionHashes"] as? [String: Data]
        metadata["lastImport"] = "2026-11-25"
        metadata["imports"] = 7
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(read["lastImport"] as? String == "2026-11-25")
        #expect(read["imports"] as? Int == 7)
        #expect(read["NSStoreModelVersionHashes"] as? [String: Data] == hashes)
        // Only the app's keys given: the store's own are kept, and the model still matches.
        try NSPersistentStoreCoordinator.setMetadata(["lastImport": "later"], forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let again = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(again["lastImport"] as? String == "later" && again["imports"] == nil)
        #expect(try count(at: url) == 2)
        #expect(throws: CoreDataError.self) {
            try NSPersistentStoreCoordinator.setMetadata(["bad": NSObject()], forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        }
    }

    @Test(arguments: [false, true])
    func metadataOfAnAddedStoreIsWrittenAtOnce(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Added.sqlite")
        let container = NSPersistentContainer(name: "Added", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [inMemory ? PersistentStoreDescription(type: .inMemory) : PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let coordinator = container.persistentStoreCoordinator
        let store = try #require(coordinator.persistentStores.first)
        let uuid = coordinator.metadata(for: store)[NSStoreUUIDKey] as? String
        try coordinator.setMetadata(["seeded": true, "seedVersion": 3], for: store)
        let read = coordinator.metadata(for: store)
        #expect(read["seeded"] as? Bool == true && read["seedVersion"] as? Int == 3)
        #expect(read[NSStoreUUIDKey] as? String == uuid)
        #expect(read["NSStoreModelVersionHashes"] as? [String: Data] == ManagedObjectModel(Note.self).entityVersionHashesByName)
        // The UUID stays; values that are not property lists are refused, the old ones kept.
        #expect(throws: CoreDataError.self) { try coordinator.setMetadata([NSStoreUUIDKey: "another"], for: store) }
        #expect(throws: CoreDataError.self) { try coordinator.setMetadata(["bad": NSObject()], for: store) }
        #expect(coordinator.metadata(for: store)["seedVersion"] as? Int == 3)
        if !inMemory {
            // On disk, for the next process.
            #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)["seedVersion"] as? Int == 3)
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                Note(context: context).id = 1
                try context.save()
            }
            try coordinator.remove(store)
            #expect(try count(at: url) == 1)
        }
    }
}
