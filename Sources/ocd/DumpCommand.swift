import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd dump <store> --entity E [--json]`: every object of an entity, read-only.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print the objects of one entity of a store (read-only), as text or JSON."
    )

    @Argument(help: "An SQLite store written by Core Data or OpenCoreData, or a postgres:// URL of a PostgreSQL store.")
    var store: String

    @Option(name: .long, help: "The entity whose objects to print (with its sub-entities).")
    var entity: String

    @Option(name: .long, help: "A model file to read the store with, instead of the model it carries.")
    var model: String?

    @Option(name: .long, help: "Print at most this many objects (0: all).")
    var limit: Int = 0

    @Flag(name: .long, help: "Print a JSON array of objects.")
    var json = false

    func run() throws {
        let (url, type) = try StoreLocation.parse(store)
        let loaded = try StoreLocation.model(file: model, store: url, type: type)
        guard loaded.entitiesByName[entity] != nil else {
            throw ValidationError("The model has no entity \(entity). Its entities: \(loaded.entities.map(\.name).sorted().joined(separator: ", ")).")
        }
        let container = PersistentContainer(name: "Dump", managedObjectModel: loaded)
        let description = PersistentStoreDescription(url: url, type: type)
        description.isReadOnly = true
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.viewContext
        let rows: [[String: Any]] = try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: entity)
            if limit > 0 { request.fetchLimit = limit }
            return try context.fetch(request).map(Self.row)
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for row in rows {
                print(row["objectID"] as? String ?? "?")
                for key in row.keys.sorted() where key != "objectID" {
                    print("  \(key) = \(row[key] is NSNull ? "nil" : row[key].map { "\($0)" } ?? "nil")")
                }
            }
            print("\(rows.count) \(entity) objects")
        }
    }

    /// An object as JSON-ready values: attributes, to-one relationships as URIs, to-many as URI lists.
    static func row(_ object: ManagedObject) -> [String: Any] {
        var row: [String: Any] = ["objectID": object.objectID.uriRepresentation().absoluteString, "entity": object.entity.name]
        for property in object.entity.allProperties where !property.isTransient {
            let value = object.value(forKey: property.name)
            switch value {
            case let target as ManagedObject: row[property.name] = target.objectID.uriRepresentation().absoluteString
            case let members as [ManagedObject]: row[property.name] = members.map { $0.objectID.uriRepresentation().absoluteString }
            case let members as Set<ManagedObject>: row[property.name] = members.map { $0.objectID.uriRepresentation().absoluteString }.sorted()
            default: row[property.name] = jsonValue(value)
            }
        }
        return row
    }

    private static func jsonValue(_ value: Any?) -> Any {
        switch value {
        case nil: NSNull()
        case let date as Date: date.formatted(.iso8601)
        case let data as Data: data.base64EncodedString()
        case let uuid as UUID: uuid.uuidString
        case let url as URL: url.absoluteString
        case let decimal as Decimal: "\(decimal)"
        case let string as String: string
        case let bool as Bool: bool
        case let number as Int16: Int(number)
        case let number as Int32: Int(number)
        case let number as Int64: Int(number)
        case let number as Int: number
        case let number as Float: Double(number)
        case let number as Double: number
        case let array as [Any]: array.map(jsonValue)
        case let other?: "\(other)"
        }
    }
}
