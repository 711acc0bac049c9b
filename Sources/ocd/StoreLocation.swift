import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// A store named on the command line: an SQLite file, or a `postgres://` URL.
enum StoreLocation {
    /// The store URL and type of `text`.
    static func parse(_ text: String) throws -> (URL, PersistentStore.StoreType) {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let url = URL(string: text) else { throw ValidationError("\(withoutPassword(text)) is not a URL.") }
            return (url, .postgreSQL)
        }
        return (URL(fileURLWithPath: text), .sqlite)
    }

    /// The model to read a store with: `file` when given, else the one the store carries.
    static func model(file: String?, store url: URL, type: PersistentStore.StoreType) throws -> ManagedObjectModel {
        let (found, source) = InspectCommand.model(file: file, store: url, type: type)
        guard let found else { throw ValidationError("No model to read the store with: \(source).") }
        return found
    }

    /// What the store at `url` holds (metadata, entities, tables, history).
    static func inspect(_ url: URL, type: PersistentStore.StoreType) throws -> StoreInspection {
        type == .postgreSQL ? try StoreInspection(postgreSQLStoreAt: url) : try StoreInspection(storeAt: url)
    }

    /// A URL to print: its password replaced.
    static func withoutPassword(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "…"
        return components.string ?? text
    }
}
