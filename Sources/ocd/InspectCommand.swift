import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd inspect <store>`: what any Core Data SQLite store holds, with or without its model.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a Core Data store's metadata, entities with row counts, model source and history."
    )

    @Argument(help: "An SQLite store written by Core Data or OpenCoreData, or a PostgreSQL store's postgres:// URL.")
    var store: String

    @Option(name: .long, help: "A model file (.xcdatamodeld, .xcdatamodel, .momd, .mom) to describe the store with, instead of the model it carries.")
    var model: String?

    func run() throws {
        let (url, type) = try StoreLocation.parse(store)
        let inspection = try StoreLocation.inspect(url, type: type)
        print("Store \(type == .postgreSQL ? StoreLocation.withoutPassword(store) : url.path)")
        let metadata = inspection.metadata
        if metadata.isEmpty {
            print("  no metadata (Z_METADATA is missing or empty)")
        } else {
            print("""
                  UUID \(metadata[NSStoreUUIDKey] as? String ?? "-"), framework version \
                \(metadata["NSPersistenceFrameworkVersion"].map { "\($0)" } ?? "-"), model versions \
                \(Self.versions(metadata["NSStoreModelVersionIdentifiers"]))
                """)
        }

        let (loaded, source) = Self.model(file: model, store: url, type: type)
        print("  model: \(source)")
        if let loaded {
            let stored = metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
            let differing = loaded.entityVersionHashesByName.filter { stored[$0.key] != $0.value }.keys.sorted()
            print(differing.isEmpty ? "  version hashes: match the store" : """
                  version hashes: differ for \(differing.joined(separator: ", ")) (the store needs migrating \
                to this model)
                """)
            for line in loaded.unsupportedFeatures { print("  not supported: \(line)") }
        }

        print("Entities")
        if inspection.entities.isEmpty { print("  none listed (no Z_PRIMARYKEY)") }
        let described = loaded?.entitiesByName ?? [:]
        for entity in inspection.entities {
            var line = "  \(entity.name)".padding(toLength: 34, withPad: " ", startingAt: 0) + String(entity.rowCount).leftPadded(8) + " rows"
            line += "  Z_ENT \(entity.number), table \(entity.table)"
            if let parent = entity.superentityName { line += ", inherits \(parent)" }
            if let description = described[entity.name] ?? described.values.first(where: { $0.renamingIdentifier == entity.name }) {
                let attributes = description.attributesByName.count, relationships = description.relationshipsByName.count
                line += ", \(attributes) attributes, \(relationships) relationships" + (description.isAbstract ? ", abstract" : "")
            }
            print(line)
        }

        print("Tables")
        for table in inspection.tables {
            print("  \(table.name)".padding(toLength: 34, withPad: " ", startingAt: 0) + String(table.rowCount).leftPadded(8) + " rows")
        }

        if let history = inspection.history {
            var line = "History: \(history.transactionCount) transactions, \(history.changeCount) changes"
            if let first = history.firstTimestamp, let last = history.lastTimestamp {
                line += ", \(first.formatted(.iso8601)) … \(last.formatted(.iso8601))"
            }
            if !history.authors.isEmpty { line += ", authors \(history.authors.joined(separator: ", "))" }
            print(line)
        } else {
            print("History: not recorded")
        }
    }

    static func versions(_ value: (any Sendable)?) -> String {
        guard let list = value as? [any Sendable] else { return "-" }
        return list.isEmpty ? "none" : list.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    /// The model to describe the store with: the file given, else the store's own cache.
    static func model(file: String?, store: URL, type: PersistentStore.StoreType = .sqlite) -> (ManagedObjectModel?, String) {
        if let file {
            do { return (try ManagedObjectModel(contentsOf: URL(fileURLWithPath: file), version: nil), "from \(file)") }
            catch { return (nil, "could not load \(file): \(error)") }
        }
        do {
            let cached = type == .postgreSQL
                ? try ManagedObjectModel(cachedInPostgreSQLStoreAt: store)
                : try ManagedObjectModel(cachedInStoreAt: store)
            return (cached, "from the store's cache (Z_MODELCACHE)")
        }
        catch let error as CoreDataError { return (nil, "none (\(error.message)); pass --model with the app's model file") }
        catch { return (nil, "none (\(error)); pass --model with the app's model file") }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
