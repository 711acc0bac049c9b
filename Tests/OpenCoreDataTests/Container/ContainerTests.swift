import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ContainerTests {
    @Test func theDefaultStoreLivesUnderXDGDataHome() async {
        await #expect(processExitsWith: .success) {
            let directory = TemporaryDirectory()
            setenv("XDG_DATA_HOME", directory.url.path, 1)
            #expect(PersistentContainer.defaultDirectoryURL().path == directory.url.path)
            let container = PersistentContainer(name: "Notes", managedObjectModel: ManagedObjectModel(Note.self))
            let url = container.persistentStoreDescriptions.first?.url
            guard url?.path == directory.url.appendingPathComponent("Notes/Notes.sqlite").path else { exit(2) }
            try container.loadPersistentStores()
            guard FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("Notes/Notes.sqlite").path) else { exit(3) }
            unsetenv("XDG_DATA_HOME")
            guard PersistentContainer.defaultDirectoryURL().path.hasSuffix(".local/share") else { exit(4) }
        }
    }

    @Test func loadPersistentStoresReportsEachDescription() async throws {
        let directory = TemporaryDirectory()
        let container = PersistentContainer(name: "Multi", managedObjectModel: ManagedObjectModel(Note.self))
        let good = PersistentStoreDescription(url: directory.file("good.sqlite"))
        let bad = PersistentStoreDescription(url: directory.file("bad.sqlite"))
        bad.type = "Binary"          // Core Data spells store types as strings
        let background = PersistentStoreDescription(type: .inMemory)
        background.shouldAddStoreAsynchronously = true
        container.persistentStoreDescriptions = [good, bad, background]
        let results = Recorder<String>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            container.loadPersistentStores { description, error in
                results.append("\(description.type):\(error == nil ? "ok" : "\((error as? CoreDataError)?.code.rawValue ?? 0)")")
                if results.values.count == 3 { continuation.resume() }
            }
        }
        #expect(Set(results.values) == ["SQLite:ok", "Binary:134000", "InMemory:ok"])
        #expect(container.persistentStoreCoordinator.persistentStores.count == 2)
    }

    @Test func addingTheSameFileTwiceIsAnError() throws {
        let stack = try TestStack(.sqlite)
        let error = #expect(throws: CoreDataError.self) {
            try stack.container.persistentStoreCoordinator.addPersistentStore(type: .sqlite, at: stack.storeURL)
        }
        #expect(error?.code == .persistentStoreOpen)
    }

    @Test func twoContainersOnOneFileSeeEachOthersSaves() throws {
        let directory = TemporaryDirectory()
        let first = try TestStack(.sqlite, directory: directory)
        let second = try TestStack(.sqlite, directory: directory)
        let writer = first.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            _ = Note(context: writer)
            try writer.save()
        }
        let reader = second.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            #expect(try reader.count(for: Note.fetchRequest()) == 1)
            _ = Note(context: reader)
            try reader.save()
        }
        try writer.performAndWait { () throws in
            #expect(try writer.fetch(Note.fetchRequest()).count == 2)
        }
    }

    @Test func readOnlyStoresRefuseWrites() throws {
        let directory = TemporaryDirectory()
        _ = try TestStack(.sqlite, directory: directory)
        let container = PersistentContainer(name: "Test", managedObjectModel: ManagedObjectModel(Note.self, Sample.self))
        let description = PersistentStoreDescription(url: directory.file("Test.sqlite"))
        description.isReadOnly = true
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.count(for: Note.fetchRequest()) == 0)
            _ = Note(context: context)
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.storeDetail?.engine == "SQLite")
        }
    }
}
