import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd copy <from> <to>`: a store moved to another location and type, as
/// `migratePersistentStore(_:to:options:type:)` moves it.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a store to another location and type: an SQLite file into a PostgreSQL schema (postgres://user@host/db?schema=s) and back.",
        discussion: """
            The destination must be a new file or an empty schema. Objects, relationships, orders, key \
            counters, the store's UUID and its persistent history (when it records one) are copied. The source \
            is only read.
            """
    )

    @Argument(help: "The store to copy: an SQLite file, or a postgres:// URL.")
    var from: String

    @Argument(help: "Where to copy it: a new SQLite file, or a postgres:// URL of an empty schema.")
    var to: String

    @Option(name: .long, help: "The model file (.momd, .mom, .xcdatamodeld) to read the store with, instead of the model the store carries.")
    var model: String?

    func run() throws {
        let (source, sourceType) = try StoreLocation.parse(from)
        let (destination, destinationType) = try StoreLocation.parse(to)
        let loaded = try StoreLocation.model(file: model, store: source, type: sourceType)
        // A store that records history is opened with it, and the copy records it too.
        let inspection = try StoreLocation.inspect(source, type: sourceType)
        let history: [String: any Sendable] = inspection.history == nil ? [:] : [NSPersistentHistoryTrackingKey: true]
        let container = PersistentContainer(name: "Copy", managedObjectModel: loaded)
        let description = PersistentStoreDescription(url: source, type: sourceType)
        description.shouldMigrateStoreAutomatically = false
        for (key, value) in history { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let coordinator = container.persistentStoreCoordinator
        guard let store = coordinator.persistentStores.first else { throw ValidationError("The source store could not be added.") }
        try coordinator.migratePersistentStore(store, to: destination, options: history, type: destinationType)
        let context = container.newBackgroundContext()
        let counts = try context.performAndWait { () throws -> [(String, Int)] in
            try loaded.entities.filter { $0.superentity == nil }.map(\.name).sorted().map { name in
                (name, try context.count(for: FetchRequest<ManagedObject>(entityName: name)))
            }
        }
        print("Copied \(StoreLocation.withoutPassword(from)) to \(StoreLocation.withoutPassword(to))" + (inspection.history.map { ", with \($0.transactionCount) history transactions" } ?? "") + ":")
        for (name, count) in counts { print("  \(name.padding(toLength: 30, withPad: " ", startingAt: 0)) \(String(count).leftPadded(8))") }
    }
}
