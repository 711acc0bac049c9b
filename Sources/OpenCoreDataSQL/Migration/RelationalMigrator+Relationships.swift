import Foundation
import OpenCoreDataCore

extension RelationalMigrator {

    /// Many-to-many relationships of the new model, filled from whichever side the old model had.
    func copyJoinTables() throws {
        var done = Set<String>()
        for entity in mapping.destination.entities {
            for relationship in entity.properties.compactMap({ $0 as? RelationshipDescription })
                where relationship.isToMany && !relationship.isTransient {
                guard case .joinTable(let table, let own, let other, let order, _) = try targetLayout.storage(of: relationship),
                      done.insert(table).inserted else { continue }
                var inverseOrder: String?
                if let inverse = relationship.inverseRelationship, case .joinTable(_, _, _, let column, _) = try targetLayout.storage(of: inverse) {
                    inverseOrder = column
                }
                let columns = [own, other] + [order, inverseOrder].compactMap { $0 }
                var insert = try sessions.inserter(into: table, columns: columns, orIgnore: true)
                for kind in mapping.destination.entities where kind.isKindOf(entity: entity) {
                    for (oldTable, oldKeys) in oldRows(of: kind) {
                        for oldKey in oldKeys {
                            let row = (table: oldTable, key: oldKey)
                            guard let owner = keys[oldTable]?[oldKey] else { continue }
                            for (index, member) in try members(of: relationship, in: kind, owner: row).enumerated() {
                                var values: [ManagedValue] = [.integer(owner.key), .integer(member.key)]
                                if order != nil { values.append(.integer(RelationalLayout.orderValue(index))) }
                                if inverseOrder != nil {
                                    values.append(try position(of: row, in: relationship.inverseRelationship, owner: member)
                                        .map { .integer(RelationalLayout.orderValue($0)) } ?? .null)
                                }
                                try insert.insert(values)
                            }
                        }
                    }
                }
                try insert.finish()
            }
        }
    }

    // MARK: - Relationships

    /// The new keys and entities of the objects `relationship` (of the new model, on an object of
    /// `entity`) holds for the row `owner`, in order: from the old relationship it maps from, or
    /// (when only the other side existed) from the old inverse.
    func members(of relationship: RelationshipDescription, in entity: EntityDescription,
                 owner: (table: String, key: Int64)) throws -> [(key: Int64, entity: EntityDescription)] {
        let wanted = relationship.destinationEntity
        var found: [(table: String, key: Int64)] = []
        if let old = mapping.sourceProperty(of: relationship, in: entity) as? RelationshipDescription, let destination = old.destinationEntity {
            let table = try sourceLayout.mapping(for: destination).table
            found = try oldMembers(of: old)[owner.key, default: []].map { (table, $0) }
        } else if let inverse = relationship.inverseRelationship, let inverseOwner = inverse.entity,
                  let old = mapping.sourceProperty(of: inverse, in: inverseOwner) as? RelationshipDescription, let oldOwner = old.entity {
            let table = try sourceLayout.mapping(for: oldOwner).table
            found = try transposedMembers(of: old)[owner.key, default: []].map { (table, $0) }
        }
        return found.compactMap { member in
            guard let moved = keys[member.table]?[member.key], wanted.map({ moved.entity.isKindOf(entity: $0) }) ?? true else { return nil }
            return moved
        }
    }

    /// The value at the end of a key path from an old row (`continent.numericISO3166Code`):
    /// to-one relationships of the old model, then an attribute; nil where a step is empty.
    func follow(_ path: [String], from entity: EntityDescription, row: (table: String, key: Int64),
                to attribute: AttributeDescription) throws -> ManagedValue {
        var entity = entity, key = row.key
        for step in path.dropLast() {
            guard let relationship = entity.relationshipsByName[step], !relationship.isToMany, let destination = relationship.destinationEntity else {
                throw CoreDataError(.migrationMissingMappingModel, """
                    The mapping model's key path \(path.joined(separator: ".")) for \(attribute.name) does not \
                    follow to-one relationships of \(entity.name) in the store's model.
                    """)
            }
            guard let next = try oldMembers(of: relationship)[key]?.first else { return .null }
            entity = destination
            key = next
        }
        guard let last = path.last, let old = entity.attributesByName[last], let slot = entity.slotByName[last] else {
            throw CoreDataError(.migrationMissingMappingModel, """
                The mapping model's key path \(path.joined(separator: ".")) for \(attribute.name) does not end \
                at an attribute of \(entity.name) in the store's model.
                """)
        }
        let entityMapping = try sourceLayout.mapping(for: entity)
        let query: SQLFragment = """
            SELECT \(identifier: entityMapping.columns[slot]) FROM \(identifier: entityMapping.table) WHERE Z_PK = \(bind: .integer(key))
            """
        var value = ManagedValue.null
        try source.forEachRow(query) { value = $0.value(0, type: old.attributeType) }
        return Self.convert(value, from: old.attributeType, to: attribute.attributeType)
    }

    /// The position of `member` among the members `inverse` (an ordered to-many of the new
    /// model) holds for `owner`.
    func position(of member: (table: String, key: Int64), in inverse: RelationshipDescription?,
                  owner: (key: Int64, entity: EntityDescription)?) throws -> Int? {
        guard let inverse, let owner, let moved = keys[member.table]?[member.key] else { return nil }
        if let known = positions[ObjectIdentifier(inverse)]?[owner.key] { return known[moved.key] }
        guard let ownerRow = origin(of: owner.entity, newKey: owner.key) else { return nil }
        var byKey: [Int64: Int] = [:]
        for (index, member) in try members(of: inverse, in: owner.entity, owner: ownerRow).enumerated() { byKey[member.key] = index }
        positions[ObjectIdentifier(inverse), default: [:]][owner.key] = byKey
        return byKey[moved.key]
    }

    /// Old keys of the members of an old relationship, by owner, in stored order.
    func oldMembers(of relationship: RelationshipDescription) throws -> [Int64: [Int64]] {
        if let cached = memberCache[ObjectIdentifier(relationship)] { return cached }
        guard let owner = relationship.entity else { return [:] }
        let sql: SQLFragment
        if !relationship.isToMany {
            let ownerMapping = try sourceLayout.mapping(for: owner)
            guard let slot = owner.toOneSlotByName[relationship.name] else { return [:] }
            let column = ownerMapping.columns[slot]
            sql = "SELECT Z_PK, \(identifier: column) FROM \(identifier: ownerMapping.table) WHERE \(identifier: column) IS NOT NULL"
        } else {
            switch try sourceLayout.storage(of: relationship) {
            case .inverseForeignKey(let table, let column, let order, _):
                sql = """
                    SELECT \(identifier: column), Z_PK FROM \(identifier: table) WHERE \(identifier: column) IS NOT NULL \
                    ORDER BY \(identifier: column), \(identifier: order ?? "Z_PK")
                    """
            case .joinTable(let table, let own, let other, let order, _):
                sql = """
                    SELECT \(identifier: own), \(identifier: other) FROM \(identifier: table) \
                    ORDER BY \(identifier: own), \(identifier: order ?? other)
                    """
            }
        }
        var result: [Int64: [Int64]] = [:]
        try source.forEachRow(sql) { result[$0.key(0), default: []].append($0.key(1)) }
        memberCache[ObjectIdentifier(relationship)] = result
        return result
    }

    /// The owners of each member of an old relationship (the relationship read backwards).
    func transposedMembers(of relationship: RelationshipDescription) throws -> [Int64: [Int64]] {
        if let cached = transposedCache[ObjectIdentifier(relationship)] { return cached }
        var result: [Int64: [Int64]] = [:]
        for (owner, members) in try oldMembers(of: relationship).sorted(by: { $0.key < $1.key }) {
            for member in members { result[member, default: []].append(owner) }
        }
        transposedCache[ObjectIdentifier(relationship)] = result
        return result
    }
}
