import Foundation
import OpenCoreData
import Testing
import TestSupport

/// `/dev/null` as an SQLite store's URL, as Core Data test stacks write it: a store in memory,
/// one per container, and no file operation touches the device.
@Suite(.dedicatedThread) struct DevNullStoreTests {
    private func container() throws -> PersistentContainer {
        let container = PersistentContainer(name: "Notes", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))]
        try container.loadPersistentStores()
        return container
    }

    @Test func aStoreAtDevNullIsInMemoryAndOfItsOwn() throws {
        let first = try container()
        let second = try container()
        let context = first.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            note.text1 = "in memory"
            try context.save()
        }
        let reader = first.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.fetch(Note.fetchRequest()).map(\.text1) } == ["in memory"])
        let other = second.newBackgroundContext()
        #expect(try other.performAndWait { try other.count(for: Note.fetchRequest()) } == 0)
        #expect(first.persistentStoreCoordinator.persistentStores.first?.type == .sqlite)

        let devNull = URL(fileURLWithPath: "/dev/null")
        try first.persistentStoreCoordinator.destroyPersistentStore(at: devNull, type: .sqlite)
        #expect(first.persistentStoreCoordinator.persistentStores.isEmpty)
        let kind = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
        #expect(kind == .typeCharacterSpecial)
        #expect(throws: CoreDataError.self) { try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: devNull) }
    }
}
