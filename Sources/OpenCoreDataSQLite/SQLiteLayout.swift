import Foundation
import OpenCoreDataCore

/// Core Data's SQLite layout for a model: one table per root entity (`Z<ROOT>`), columns
/// `Z_PK, Z_ENT, Z_OPT` then one `Z<ATTRIBUTE>` column per stored attribute in Core Data's
/// column order, and the indexes Core Data makes. See `docs/StorageLayout.md`.
struct SQLiteLayout: Sendable {
    struct Table: Sendable {
        var name: String
        /// Columns after `Z_PK, Z_ENT, Z_OPT`, in Core Data's order.
        var columns: [(name: String, type: String)]
        var root: EntityDescription
    }

    /// Per entity: its table and, per attribute slot, its column name.
    struct EntityMapping: Sendable {
        var table: String
        var columns: [String]
        var types: [AttributeType]
        /// `Z_ENT` values of the entity and its sub-entities (for fetches that include them).
        var entityNumbers: [Int]
        var hasSubentities: Bool
    }

    private(set) var tables: [Table] = []
    private var mappings: [ObjectIdentifier: EntityMapping] = [:]
    private(set) var indexes: [String] = []

    init(model: ManagedObjectModel, entityNumbers: [String: Int]) {
        let roots = model.entities.filter { $0.superentity == nil }.sorted { $0.name < $1.name }
        for root in roots {
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            // (group, declaring entity number, property name) → column
            var columns: [(key: (Int, Int, String), name: String, type: String)] = []
            var slotColumns: [ObjectIdentifier: [String: String]] = [:]
            for entity in Self.subtree(root) {
                let number = entityNumbers[entity.name] ?? entity.entityNumber
                let own = entity.properties.compactMap { $0 as? AttributeDescription }.filter { !$0.isTransient }.sorted { $0.name < $1.name }
                for attribute in own {
                    var name = "Z" + attribute.name.uppercased()
                    let base = name
                    var suffix = 0
                    while used.contains(name) {
                        suffix += 1
                        name = base + String(suffix)
                    }
                    used.insert(name)
                    columns.append(((Self.group(attribute.attributeType), number, attribute.name), name, attribute.attributeType.sqliteColumnType))
                    slotColumns[ObjectIdentifier(entity), default: [:]][attribute.name] = name
                }
            }
            columns.sort { a, b in
                if a.key.0 != b.key.0 { return a.key.0 < b.key.0 }
                if a.key.1 != b.key.1 { return a.key.1 < b.key.1 }
                return a.key.2 < b.key.2
            }
            let tableName = "Z" + root.name.uppercased()
            tables.append(Table(name: tableName, columns: columns.map { ($0.name, $0.type) }, root: root))
            if !root.subentities.isEmpty {
                indexes.append("CREATE INDEX IF NOT EXISTS \(tableName)_Z_ENT_INDEX ON \(tableName) (Z_ENT)")
            }
            for entity in Self.subtree(root) {
                // An inherited attribute keeps the column of the entity that declares it.
                let names = entity.storedAttributes.map { attribute in
                    var declaring: EntityDescription? = entity
                    while let current = declaring {
                        if let column = slotColumns[ObjectIdentifier(current)]?[attribute.name] { return column }
                        declaring = current.superentity
                    }
                    return "Z" + attribute.name.uppercased()
                }
                let numbers = Self.subtree(entity).map { entityNumbers[$0.name] ?? $0.entityNumber }
                mappings[ObjectIdentifier(entity)] = EntityMapping(
                    table: tableName, columns: names, types: entity.storedAttributes.map(\.attributeType),
                    entityNumbers: numbers, hasSubentities: !entity.subentities.isEmpty)
                for attribute in entity.properties.compactMap({ $0 as? AttributeDescription }) where attribute.isIndexed && !attribute.isTransient {
                    if let slot = entity.storedAttributes.firstIndex(where: { $0 === attribute }) {
                        indexes.append("CREATE INDEX IF NOT EXISTS Z_\(entity.name)_\(attribute.name) ON \(tableName) (\(names[slot]) COLLATE BINARY ASC)")
                    }
                }
                for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                    let columns = constraint.compactMap { key in entity.storedAttributes.firstIndex { $0.name == key }.map { names[$0] } }
                    guard columns.count == constraint.count else { continue }
                    indexes.append("CREATE UNIQUE INDEX IF NOT EXISTS Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_")) ON \(tableName) (\(columns.map { "\($0) COLLATE BINARY ASC" }.joined(separator: ", ")))")
                }
            }
        }
    }

    func mapping(for entity: EntityDescription) throws -> EntityMapping {
        guard let mapping = mappings[ObjectIdentifier(entity)] else {
            throw CoreDataError(.coreData, "The entity \(entity.name) is not part of the model this SQLite store was opened with. Use entities from the coordinator's managedObjectModel.")
        }
        return mapping
    }

    /// `CREATE TABLE` statements for the entity tables.
    var createTableStatements: [String] {
        tables.map { table in
            let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + table.columns.map { "\($0.name) \($0.type)" }
            return "CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )"
        }
    }

    private static func subtree(_ entity: EntityDescription) -> [EntityDescription] {
        [entity] + entity.subentities.sorted { $0.name.lowercased() < $1.name.lowercased() }.flatMap { subtree($0) }
    }

    /// Core Data's column groups (see FORMAT.md §7).
    private static func group(_ type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 0
        case .date, .double, .float: 1
        case .decimal: 2
        case .string: 3
        case .uri: 4
        case .uuid: 5
        case .binaryData: 7
        }
    }
}
