import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A fault whose row is gone (deleted by another coordinator on the same file, as another
/// process would) never kills the process: as Core Data does with
/// `shouldDeleteInaccessibleFaults` (the default), the object reads as deleted with nil/zero
/// values, and the next save discards it without touching the store.
@Suite(.dedicatedThread) struct InaccessibleFaultTests {
    /// Saves notes 1...3 through one container and returns the ID of note 2, deleted afterwards
    /// through a second container on the same file (the first one's row cache still has it).
    private static func noteDeletedElsewhere(_ stack: TestStack) throws -> ManagedObjectID {
        let writer = try stack.seededContext(ids: 1...3) { note, id in note.text1 = "note \(id)" }
        let id = try writer.performAndWait { () throws -> ManagedObjectID in
            let request = FetchRequest<Note>(entityName: "Note")
            request.predicate = NSPredicate(format: "id == 2")
            return try #require(try writer.fetch(request).first).objectID
        }
        let other = try PersistentContainer.loaded(at: stack.storeURL, model: stack.container.managedObjectModel)
        let remote = other.newBackgroundContext()
        try remote.performAndWait { () throws in
            remote.delete(try remote.existingObject(with: id))
            try remote.save()
        }
        return id
    }

    /// That note's ID, and a new context whose faults load from the store (not from the row
    /// cache, which still holds the deleted row).
    private static func readerOfNoteDeletedElsewhere(_ stack: TestStack) throws -> (ManagedObjectID, ManagedObjectContext) {
        let id = try noteDeletedElsewhere(stack)
        let reader = stack.container.newBackgroundContext()
        reader.stalenessInterval = 0
        return (id, reader)
    }

    @Test func aFaultWhoseRowIsGoneReadsAsDeletedAndTheSaveDiscardsIt() throws {
        let stack = try TestStack(.sqlite)
        let (id, reader) = try Self.readerOfNoteDeletedElsewhere(stack)
        try reader.performAndWait { () throws in
            #expect(reader.shouldDeleteInaccessibleFaults)
            let fault = try #require(reader.object(with: id) as? Note)
            #expect(fault.isFault)
            #expect(fault.text1 == nil)
            #expect(fault.id == 0)
            #expect(fault.isDeleted)
            #expect(reader.deletedObjects.contains(fault))
            // Another change in the same save goes through; the gone row is not "deleted" again.
            let request = FetchRequest<Note>(entityName: "Note")
            request.predicate = NSPredicate(format: "id == 3")
            try #require(try reader.fetch(request).first).text1 = "changed"
            try reader.save()
            #expect(reader.registeredObject(for: id) == nil)
            #expect(reader.deletedObjects.isEmpty)
            let all = FetchRequest<Note>(entityName: "Note")
            all.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            #expect(try reader.fetch(all).map(\.text1) == ["note 1", "changed"])
        }
    }

    @Test func deletingAFaultWhoseRowIsGoneSaves() throws {
        let stack = try TestStack(.sqlite)
        let (id, reader) = try Self.readerOfNoteDeletedElsewhere(stack)
        try reader.performAndWait { () throws in
            reader.delete(reader.object(with: id))
            try reader.save()
            #expect(try reader.count(for: FetchRequest<Note>(entityName: "Note")) == 2)
            #expect(throws: CoreDataError.self) { try reader.existingObject(with: id) }
        }
    }

    @Test func rollbackMakesAnInaccessibleObjectAFaultAgain() throws {
        let stack = try TestStack(.sqlite)
        let (id, reader) = try Self.readerOfNoteDeletedElsewhere(stack)
        try reader.performAndWait { () throws in
            let fault = try #require(reader.object(with: id) as? Note)
            _ = fault.text1
            #expect(fault.isDeleted)
            reader.rollback()
            #expect(!fault.isDeleted)
            #expect(fault.isFault)
            // Still gone: it reads as deleted again, never with invented values.
            #expect(fault.text1 == nil)
            #expect(fault.isDeleted)
        }
    }

    @Test func theOptionOffTrapsAsCoreDataRaises() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack(.sqlite)
            let (id, reader) = try Self.readerOfNoteDeletedElsewhere(stack)
            reader.shouldDeleteInaccessibleFaults = false
            reader.performAndWait {
                _ = (reader.object(with: id) as? Note)?.text1
            }
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("could not fulfill a fault"))
    }

    @Test func aRelationshipTheStoreCannotReadStopsTheNextSaveInsteadOfKillingTheProcess() throws {
        let stack = try TestStack(.sqlite, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let drawer = Drawer(context: context)
            drawer.label = "d"
            let folder = Folder(context: context)
            folder.title = "f"
            folder.drawer = drawer
            try context.save()
            context.reset()
            let fetched = try #require(try context.fetch(FetchRequest<Drawer>(entityName: "Drawer")).first)
            _ = fetched.label
            // The store goes away under the context (as a failing disk would make it unreadable).
            let coordinator = try #require(stack.container.persistentStoreCoordinator as PersistentStoreCoordinator?)
            try coordinator.remove(try #require(coordinator.persistentStores.first))
            #expect(fetched.folders.isEmpty)
            fetched.label = "changed on an incomplete graph"
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.message.contains("could not be read"))
        }
    }
}
