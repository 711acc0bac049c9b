import Foundation
import OpenCoreDataCore

/// Core Data's relational layout for a model (the SQLite store's file, the PostgreSQL store's
/// schema): one table per root entity (`Z<ROOT>`, single-table
/// inheritance), columns `Z_PK, Z_ENT, Z_OPT` then one `Z<ATTRIBUTE>` column per stored
/// attribute and one `Z<RELATIONSHIP>` foreign key per to-one (with a `Z<n>_<RELATIONSHIP>`
/// entity column when the destination has sub-entities), in Core Data's column order; a
/// `Z_<n><RELATIONSHIP>` join table per many-to-many pair; and the indexes Core Data makes.
/// See `docs/StorageLayout.md`. The layout is structure; ``SQLDialect`` writes its SQL.
///
/// A class, built once when a store is loaded and read-only afterwards, so that handing it to
/// every fetch costs one retain (it is read per fetch and per save).
// @unchecked Sendable: every stored property is written only inside `init` (and the helper it
// calls); afterwards the layout is immutable and shared by the store's threads, but for the
// cache of rendered queries, which a lock guards.
package final class RelationalLayout: @unchecked Sendable {
    /// A table of a root entity and its sub-entities.
    package struct Table: Sendable {
        package var name: String
        /// Columns after `Z_PK, Z_ENT, Z_OPT`, in Core Data's order, with the type of what they
        /// hold (keys and entity numbers as `.integer64`).
        package var columns: [(name: String, type: AttributeType)]
        package var root: EntityDescription
    }

    /// A many-to-many join table: the two key columns (its primary key) and the order columns
    /// of ordered sides.
    package struct JoinTable: Sendable {
        package var name: String
        package var keyColumns: (String, String)
        package var orderColumns: [String]
    }

    /// An index Core Data makes: on the entity column of a hierarchy table, on each foreign key,
    /// per fetch index and per uniqueness constraint.
    package struct Index: Sendable {
        package var name: String
        package var table: String
        package var columns: [(name: String, ascending: Bool)]
        package var isUnique = false
        /// Whether the columns carry Core Data's explicit `COLLATE BINARY ASC|DESC` (fetch indexes
        /// and constraints) or are listed bare (the indexes the layout itself needs).
        package var collated = false

        /// Whether `other` indexes the same columns of the same table the same way.
        func sameDefinition(as other: Index) -> Bool {
            table == other.table && isUnique == other.isUnique && collated == other.collated
                && columns.map(\.name) == other.columns.map(\.name) && columns.map(\.ascending) == other.columns.map(\.ascending)
        }
    }

    /// Per entity: its table and, per value slot (attributes, then to-ones), its column.
    /// Immutable; a class so that passing it around costs one retain.
    package final class EntityMapping: Sendable {
        package let table: String
        /// Per value slot, the column name.
        package let columns: [String]
        package let types: [AttributeType]
        /// Per value slot, the position of its column among the table's columns.
        package let tableIndexes: [Int]
        /// For to-one slots whose destination has sub-entities: the `Z<n>_<NAME>` column holding
        /// the destination's `Z_ENT`, and its position among the table's columns.
        package let entityColumns: [Int: (name: String, tableIndex: Int)]
        /// For to-one slots: the destination entity.
        package let destinations: [Int: EntityDescription]
        /// `Z_ENT` values of the entity and its sub-entities (for fetches that include them).
        package let entityNumbers: [Int]
        package let hasSubentities: Bool
        /// Every column of the table after `Z_PK, Z_ENT, Z_OPT` (rows of any entity of the
        /// hierarchy are read with these).
        package let tableColumns: [String]
        /// The columns an insert writes, after `Z_PK, Z_ENT, Z_OPT`: one per slot, then the
        /// entity columns in slot order.
        package let insertColumns: [String]
        /// Whether some slot is a to-one (rows need the object-ID conversion).
        package let hasToOnes: Bool
        /// Whether slot n reads table column n (no reordering needed).
        package let columnsInSlotOrder: Bool
        /// `Z_PK, Z_ENT, Z_OPT` and `tableColumns`, as a fetch selects them (made once: building
        /// it cost 4,000 instructions per fetch, and writing each name at every fetch more).
        package let rowColumns: SQLFragment

        package init(table: String, columns: [String], types: [AttributeType], tableIndexes: [Int],
                     entityColumns: [Int: (name: String, tableIndex: Int)],
             destinations: [Int: EntityDescription], entityNumbers: [Int], hasSubentities: Bool, tableColumns: [String]) {
            self.table = table
            self.columns = columns
            self.types = types
            self.tableIndexes = tableIndexes
            self.entityColumns = entityColumns
            self.destinations = destinations
            self.entityNumbers = entityNumbers
            self.hasSubentities = hasSubentities
            self.tableColumns = tableColumns
            self.insertColumns = columns + entityColumns.keys.sorted().compactMap { entityColumns[$0]?.name }
            self.hasToOnes = types.contains(.objectID)
            self.columnsInSlotOrder = tableIndexes == Array(tableIndexes.indices)
            let rowColumns = SQLFragment.identifiers(["Z_PK", "Z_ENT", "Z_OPT"] + tableColumns)
            self.rowColumns = rowColumns.prerendered ?? rowColumns
        }
    }

    /// How a to-many relationship is stored: through its inverse's foreign key, or in a join table.
    package enum ToManyStorage: Sendable {
        /// The destination table's `column` holds the source's key (and `orderColumn`, for an
        /// ordered relationship, the member's position).
        case inverseForeignKey(table: String, column: String, orderColumn: String?, destination: EntityDescription)
        /// A join table: `ownColumn` holds the source's key, `otherColumn` the destination's
        /// (and `orderColumn`, for an ordered relationship, the destination's position).
        case joinTable(table: String, ownColumn: String, otherColumn: String, orderColumn: String?, destination: EntityDescription)

        package var orderColumn: String? {
            switch self {
            case .inverseForeignKey(_, _, let column, _), .joinTable(_, _, _, let column, _): column
            }
        }

        /// The entity of the relationship's members.
        package var destination: EntityDescription {
            switch self {
            case .inverseForeignKey(_, _, _, let destination), .joinTable(_, _, _, _, let destination): destination
            }
        }
    }

    /// The value Core Data stores for the member at `index` of an ordered relationship
    /// (sparse, as in its stores: 2048, 3072, …).
    package static func orderValue(_ index: Int) -> Int64 { Int64(index + 2) * 1024 }

    package private(set) var tables: [Table] = []
    private var mappings: [ObjectIdentifier: EntityMapping] = [:]
    private var toMany: [ObjectIdentifier: ToManyStorage] = [:]
    package private(set) var joinTables: [JoinTable] = []
    package private(set) var indexes: [Index] = []
    /// Every entity by its `Z_ENT`.
    package private(set) var entitiesByNumber: [Int: EntityDescription] = [:]
    /// `Z_FOK_<NAME>` columns, by the to-one relationship whose inverse is ordered.
    private var orderColumns: [ObjectIdentifier: String] = [:]
    private var numbersByEntity: [ObjectIdentifier: Int] = [:]
    /// Rendered "one row by its key" queries (`rowByKeyQuery`), made on first use: the one part of
    /// the layout written after `init`, behind its own lock.
    let rowQueries = Locked<[RowQueryKey: String]>([:])

    package init(model: ManagedObjectModel, entityNumbers: [String: Int]) {
        for entity in model.entities {
            let number = entityNumbers[entity.name] ?? entity.entityNumber
            entitiesByNumber[number] = entity
            numbersByEntity[ObjectIdentifier(entity)] = number
        }
        let number = { [numbersByEntity] (entity: EntityDescription) in numbersByEntity[ObjectIdentifier(entity)] ?? entity.entityNumber }
        let roots = model.entities.filter { $0.superentity == nil }.sorted { $0.name < $1.name }
        for root in roots {
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func unique(_ base: String) -> String {
                var name = base
                var suffix = 0
                while used.contains(name) {
                    suffix += 1
                    name = base + String(suffix)
                }
                used.insert(name)
                return name
            }
            // Sort key: (group, declaring entity number, part, property name, sub-order).
            var columns: [(key: (Int, Int, Int, String, Int), name: String, type: AttributeType)] = []
            var columnOf: [ObjectIdentifier: [String: String]] = [:]
            var entityColumnOf: [ObjectIdentifier: [String: String]] = [:]
            // Declaration order first (Z_ENT, then property order) decides which duplicate keeps its name.
            for entity in Self.subtree(root).sorted(by: { number($0) < number($1) }) {
                let declaring = number(entity)
                for property in entity.properties where !property.isTransient {
                    if let attribute = property as? AttributeDescription {
                        let name = unique("Z" + attribute.name.uppercased())
                        columns.append(((Self.group(attribute.attributeType), declaring, 0, attribute.name, 0), name, attribute.attributeType))
                        columnOf[ObjectIdentifier(entity), default: [:]][attribute.name] = name
                    } else if let relationship = property as? RelationshipDescription, !relationship.isToMany {
                        let name = unique("Z" + relationship.name.uppercased())
                        columns.append(((0, declaring, 1, relationship.name, 0), name, .integer64))
                        columnOf[ObjectIdentifier(entity), default: [:]][relationship.name] = name
                        if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                            let entityColumn = unique("Z\(number(destination))_" + relationship.name.uppercased())
                            columns.append(((0, declaring, 1, relationship.name, 1), entityColumn, .integer64))
                            entityColumnOf[ObjectIdentifier(entity), default: [:]][relationship.name] = entityColumn
                        }
                        if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                            let orderColumn = unique("Z_FOK_" + relationship.name.uppercased())
                            columns.append(((0, declaring, 2, relationship.name, 0), orderColumn, .integer64))
                            orderColumns[ObjectIdentifier(relationship)] = orderColumn
                        }
                    }
                }
            }
            columns.sort { a, b in
                if a.key.0 != b.key.0 { return a.key.0 < b.key.0 }
                if a.key.1 != b.key.1 { return a.key.1 < b.key.1 }
                if a.key.2 != b.key.2 { return a.key.2 < b.key.2 }
                if a.key.3 != b.key.3 { return a.key.3 < b.key.3 }
                return a.key.4 < b.key.4
            }
            let tableName = "Z" + root.name.uppercased()
            let tableColumns = columns.map(\.name)
            tables.append(Table(name: tableName, columns: columns.map { ($0.name, $0.type) }, root: root))
            if !root.subentities.isEmpty {
                indexes.append(Index(name: "\(tableName)_Z_ENT_INDEX", table: tableName, columns: [("Z_ENT", true)]))
            }
            // An inherited property keeps the column of the entity that declares it.
            func lookup(_ table: [ObjectIdentifier: [String: String]], _ entity: EntityDescription, _ name: String) -> String? {
                var declaring: EntityDescription? = entity
                while let current = declaring {
                    if let column = table[ObjectIdentifier(current)]?[name] { return column }
                    declaring = current.superentity
                }
                return nil
            }
            for entity in Self.subtree(root) {
                let slotNames = entity.storedAttributes.map(\.name) + entity.toOneRelationships.map(\.name)
                let names = slotNames.map { lookup(columnOf, entity, $0) ?? "Z" + $0.uppercased() }
                var entityColumns: [Int: (name: String, tableIndex: Int)] = [:]
                var destinations: [Int: EntityDescription] = [:]
                for (offset, relationship) in entity.toOneRelationships.enumerated() {
                    let slot = entity.storedAttributes.count + offset
                    destinations[slot] = relationship.destinationEntity
                    if let column = lookup(entityColumnOf, entity, relationship.name), let index = tableColumns.firstIndex(of: column) {
                        entityColumns[slot] = (column, index)
                    }
                }
                let numbers = Self.subtree(entity).map(number)
                mappings[ObjectIdentifier(entity)] = EntityMapping(
                    table: tableName, columns: names,
                    types: entity.storedAttributes.map(\.attributeType) + entity.toOneRelationships.map { _ in .objectID },
                    tableIndexes: names.map { tableColumns.firstIndex(of: $0) ?? 0 },
                    entityColumns: entityColumns, destinations: destinations,
                    entityNumbers: numbers, hasSubentities: !entity.subentities.isEmpty, tableColumns: tableColumns)
                for relationship in entity.properties.compactMap({ $0 as? RelationshipDescription })
                    where !relationship.isToMany && !relationship.isTransient {
                    if let column = lookup(columnOf, entity, relationship.name) {
                        indexes.append(Index(name: "\(tableName)_\(column)_INDEX", table: tableName, columns: [(column, true)]))
                    }
                }
                // Fetch indexes, plus one named after each indexed attribute (as Core Data adds
                // them). A single-element index on a to-one is covered by the FK index; indexes
                // over to-manys have no columns.
                let properties = Dictionary(entity.allProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
                for index in entity.fetchIndexesWithIndexedAttributes where !index.elements.isEmpty {
                    let described = index.elements.map { properties[$0.propertyName] }
                    guard described.allSatisfy({ $0 != nil && !$0!.isTransient && !(($0 as? RelationshipDescription)?.isToMany ?? false) }),
                          !(described.count == 1 && described[0] is RelationshipDescription) else { continue }
                    let columns = index.elements.compactMap { element in
                        lookup(columnOf, entity, element.propertyName).map { (name: $0, ascending: element.isAscending) }
                    }
                    guard columns.count == index.elements.count else { continue }
                    indexes.append(Index(name: "Z_\(entity.name)_\(index.name)", table: tableName, columns: columns, collated: true))
                }
                for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                    let columns = constraint.compactMap { lookup(columnOf, entity, $0) }
                    guard columns.count == constraint.count else { continue }
                    indexes.append(Index(name: "Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))", table: tableName,
                                         columns: columns.map { ($0, true) }, isUnique: true, collated: true))
                }
            }
        }
        addToManyStorage(model: model, number: number)
        indexes = Self.distinctlyNamed(indexes)
    }

    /// The indexes with one name each: an index made twice (one name, one definition) is kept
    /// once, and an index whose name is
    /// another one's — compared without case, as both databases compare names — is renamed with
    /// a hash of what it indexes. Core Data's names join property names with `_`, so the
    /// constraints `[a_b, c]` and `[a, b_c]` are both `Z_E_UNIQUE_a_b_c`; the second was created
    /// with `IF NOT EXISTS`, that is never, and its duplicates were accepted. The first index of a
    /// name keeps Core Data's name.
    static func distinctlyNamed(_ indexes: [Index]) -> [Index] {
        var taken: [String: Index] = [:]
        var result: [Index] = []
        for var index in indexes {
            let name = index.name
            let definition = index.table + "(" + index.columns.map(\.name).joined(separator: ",") + ")"
            var attempt = 0
            while let holder = taken[index.name.lowercased()], !holder.sameDefinition(as: index) {
                attempt += 1
                index.name = name + "_" + SQLDialect.digest(attempt == 1 ? definition : definition + "#\(attempt)")
            }
            guard taken[index.name.lowercased()] == nil else { continue }   // made twice
            taken[index.name.lowercased()] = index
            result.append(index)
        }
        return result
    }

    /// To-many relationships: through the inverse's foreign key, or (both sides to-many) a join
    /// table named after the side whose entity has the lower `Z_ENT` (CoreDataFormat.md §7).
    private func addToManyStorage(model: ManagedObjectModel, number: (EntityDescription) -> Int) {
        var madeTables = Set<String>()
        for entity in model.entities {
            for relationship in entity.properties.compactMap({ $0 as? RelationshipDescription })
                where relationship.isToMany && !relationship.isTransient {
                guard let inverse = relationship.inverseRelationship, let destination = relationship.destinationEntity,
                      let destinationMapping = mappings[ObjectIdentifier(destination)] else { continue }
                if !inverse.isToMany {
                    // A model file can name an inverse that is not a to-one of the destination (the
                    // archive fuzzer found one): no storage then, and using it is an error.
                    guard let slot = destination.toOneSlotByName[inverse.name], slot < destinationMapping.columns.count else { continue }
                    toMany[ObjectIdentifier(relationship)] = .inverseForeignKey(
                        table: destinationMapping.table, column: destinationMapping.columns[slot],
                        orderColumn: relationship.isOrdered ? orderColumns[ObjectIdentifier(inverse)] : nil, destination: destination)
                    continue
                }
                guard let inverseOwner = inverse.entity else { continue }
                // R1 belongs to the entity with the lower Z_ENT; a reflexive pair: the later name.
                let isFirst = number(entity) != number(inverseOwner)
                    ? number(entity) < number(inverseOwner)
                    : relationship.name > inverse.name
                let (r1, e1, r2, e2) = isFirst ? (relationship, entity, inverse, inverseOwner) : (inverse, inverseOwner, relationship, entity)
                let table = "Z_\(number(e1))\(r1.name.uppercased())"
                let e1Column = "Z_\(number(e1))\(r2.name.uppercased())"
                let e2Column = "Z_\(number(e2))\(r1.name.uppercased())"
                // Positions: of the E2 row in E1's ordered R1, of the E1 row in E2's ordered R2.
                let r1Order = r1.isOrdered ? "Z_FOK_\(number(e2))\(r1.name.uppercased())" : nil
                let r2Order = r2.isOrdered ? "Z_FOK_\(number(e1))\(r2.name.uppercased())" : nil
                toMany[ObjectIdentifier(relationship)] = isFirst
                    ? .joinTable(table: table, ownColumn: e1Column, otherColumn: e2Column, orderColumn: r1Order, destination: destination)
                    : .joinTable(table: table, ownColumn: e2Column, otherColumn: e1Column, orderColumn: r2Order, destination: destination)
                if madeTables.insert(table).inserted {
                    joinTables.append(JoinTable(name: table, keyColumns: (e1Column, e2Column), orderColumns: [r1Order, r2Order].compactMap { $0 }))
                    indexes.append(Index(name: "\(table)_\(e2Column)_INDEX", table: table, columns: [(e2Column, true), (e1Column, true)]))
                }
            }
        }
    }

    package func mapping(for entity: EntityDescription) throws -> EntityMapping {
        guard let mapping = mappings[ObjectIdentifier(entity)] else {
            throw CoreDataError(.coreData, """
                The entity \(entity.name) is not part of the model this store was opened with. Use entities \
                from the coordinator's managedObjectModel.
                """)
        }
        return mapping
    }

    package func storage(of relationship: RelationshipDescription) throws -> ToManyStorage {
        guard let storage = toMany[ObjectIdentifier(relationship)] else {
            throw CoreDataError(.coreData, """
                The relationship '\(relationship.name)' is not a to-many relationship of the model this store \
                was opened with.
                """)
        }
        return storage
    }

    /// The `Z_FOK_<NAME>` column of a to-one whose inverse is ordered.
    package func orderColumn(ofToOne relationship: RelationshipDescription) -> String? {
        orderColumns[ObjectIdentifier(relationship)]
    }

    /// The `Z_ENT` of an entity in this store.
    package func entityNumber(of entity: EntityDescription) -> Int {
        numbersByEntity[ObjectIdentifier(entity)] ?? entity.entityNumber
    }


    private static func subtree(_ entity: EntityDescription) -> [EntityDescription] {
        [entity] + entity.subentities.sorted { $0.name.lowercased() < $1.name.lowercased() }.flatMap { subtree($0) }
    }

    /// Core Data's column groups (see CoreDataFormat.md §7).
    private static func group(_ type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .objectID: 0
        case .date, .double, .float: 1
        case .decimal: 2
        case .string: 3
        case .uri: 4
        case .uuid: 5
        case .transformable: 6
        case .binaryData: 7
        }
    }
}
