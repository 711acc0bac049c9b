import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd migrate <store> --model <bundle>`: migrates a store to a model version in place.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current (or a named) version of a model, in place."
    )

    @Argument(help: "The store to migrate: an SQLite file or a postgres:// URL (work on a copy if it matters).")
    var store: String

    @Option(name: .long, help: "The model: an .xcdatamodeld or .momd bundle (its other versions are the possible sources), .xcdatamodel or .mom.")
    var model: String

    @Option(name: .long, help: "The version of the bundle to migrate to (default: its current version).")
    var version: String?

    @Option(name: .long, help: "An .xcmappingmodel to follow where it matches (repeatable).")
    var mapping: [String] = []

    func run() throws {
        let (url, type) = try StoreLocation.parse(store)
        let modelURL = URL(fileURLWithPath: model)
        let target = try ManagedObjectModel(contentsOf: modelURL, version: version)
        let description = PersistentStoreDescription(url: url, type: type)
        if ["xcdatamodeld", "momd"].contains(modelURL.pathExtension) {
            description.setOption(try ManagedObjectModel.versions(contentsOf: modelURL), forKey: MigrationSourceModelsOption)
        }
        if !mapping.isEmpty {
            description.setOption(try mapping.map { try MappingModel(contentsOf: URL(fileURLWithPath: $0), models: modelURL) },
                                  forKey: MappingModelsOption)
        }
        let handler: @Sendable (MigrationProgress) -> Void = { progress in
            FileHandle.standardError.write(Data("\r  \(progress)".utf8))
        }
        description.setOption(handler, forKey: MigrationProgressHandlerOption)
        let before = try StoreLocation.inspect(url, type: type).metadata["NSStoreModelVersionHashes"] as? [String: Data]
        let container = PersistentContainer(name: "Migrate", managedObjectModel: target)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        FileHandle.standardError.write(Data("\n".utf8))
        let name = type == .sqlite ? url.lastPathComponent : StoreLocation.withoutPassword(store)
        if before == target.entityVersionHashesByName {
            print("\(name) is already at this model version; nothing to do.")
        } else {
            print("Migrated \(name) to \(version ?? "the current version") of \(modelURL.lastPathComponent).")
        }
        for entity in try StoreLocation.inspect(url, type: type).entities {
            print("  \(entity.name)".padding(toLength: 34, withPad: " ", startingAt: 0) + String(entity.rowCount).leftPadded(8) + " rows")
        }
    }
}
