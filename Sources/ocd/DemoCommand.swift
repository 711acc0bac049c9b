import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd demo`: walks through contexts, queues, saving and fetching on an embedded store.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through OpenCoreData on an embedded store in a temporary folder.",
        subcommands: [BasicsDemo.self, MergeDemo.self, GraphDemo.self],
        defaultSubcommand: BasicsDemo.self
    )
}

/// `ocd demo` (`ocd demo basics`): contexts, queues, saving and fetching.
struct BasicsDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "basics",
        abstract: "perform / performAndWait, nested calls, background tasks, save and fetch."
    )

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let storeURL = folder.appendingPathComponent("Notes.sqlite")
        let container = PersistentContainer(name: "Notes", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: storeURL)]
        try container.loadPersistentStores()
        print("Store: \(storeURL.path)")
        print("Store UUID: \(container.persistentStoreCoordinator.persistentStores[0].identifier)\n")

        let walkthrough = Walkthrough(container: container)
        walkthrough.performVersusPerformAndWait()
        walkthrough.nestedCalls()
        walkthrough.backgroundTasks()
        try walkthrough.saveAndFetch()
        try await walkthrough.asyncPerform()
        try await walkthrough.viewContextOnMainQueue()
        print("\nDone.")
    }
}
