import OpenCoreDataCore

/// Statements both SQL stores run on Core Data's layout, the same in either dialect except for
/// their placeholders. Statements over a list of keys take it as `list`, the placeholders of one
/// chunk of keys (`?, ?, …` or `$1, $2, …`).
extension RelationalLayout {
    /// The members of a to-many relationship of a list of sources: `select` + `(<list>) ORDER BY
    /// <order>` reads `member key, member Z_ENT, source key` rows, in source then member order.
    package func relatedQuery(_ relationship: RelationshipDescription) throws -> (select: String, order: String, destination: EntityDescription) {
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let column, let orderColumn, let destination):
            return ("SELECT Z_PK, Z_ENT, \(column) FROM \(table) WHERE \(column) IN ", orderColumn.map { "3, \($0), 1" } ?? "3, 1", destination)
        case .joinTable(let table, let ownColumn, let otherColumn, let orderColumn, let destination):
            let mapping = try mapping(for: destination)
            return ("SELECT d.Z_PK, d.Z_ENT, j.\(ownColumn) FROM \(table) j JOIN \(mapping.table) d ON d.Z_PK = j.\(otherColumn) WHERE j.\(ownColumn) IN ",
                    orderColumn.map { "3, j.\($0), 1" } ?? "3, 1", destination)
        }
    }

    /// Sets the position of one member of an ordered relationship: bound values are the order
    /// value, the member's key and the source's key. `nil` for an unordered relationship.
    package func orderUpdate(_ relationship: RelationshipDescription, dialect: SQLDialect) throws -> String? {
        let storage = try storage(of: relationship)
        guard let orderColumn = storage.orderColumn else { return nil }
        let (value, member, source) = (dialect.placeholder(1), dialect.placeholder(2), dialect.placeholder(3))
        switch storage {
        case .inverseForeignKey(let table, let column, _, _):
            return "UPDATE \(table) SET \(orderColumn) = \(value) WHERE Z_PK = \(member) AND \(column) = \(source)"
        case .joinTable(let table, let ownColumn, let otherColumn, _, _):
            return "UPDATE \(table) SET \(orderColumn) = \(value) WHERE \(otherColumn) = \(member) AND \(ownColumn) = \(source)"
        }
    }

    // MARK: - Batch deletes that follow delete rules (`BatchDeleteRows`)

    /// The keys of the destinations of `relationship` from the rows `list` of `entity` (one
    /// column; no NULLs). `nil` when `entity` has no such to-one.
    package func destinationKeysQuery(of relationship: RelationshipDescription, from entity: EntityDescription, list: String) throws -> String? {
        if !relationship.isToMany {
            guard let slot = entity.toOneSlotByName[relationship.name] else { return nil }
            let mapping = try mapping(for: entity)
            let column = mapping.columns[slot]
            return "SELECT \(column) FROM \(mapping.table) WHERE Z_PK IN (\(list)) AND \(column) IS NOT NULL"
        }
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let foreignKey, _, _):
            return "SELECT Z_PK FROM \(table) WHERE \(foreignKey) IN (\(list))"
        case .joinTable(let table, let own, let other, _, _):
            return "SELECT \(other) FROM \(table) WHERE \(own) IN (\(list))"
        }
    }

    /// Detaches the destinations of `relationship` from the rows `list`: clears the to-one inverse
    /// that points at them (bumping their `Z_OPT`, and clearing their position in an ordered
    /// relationship) or removes the many-to-many pairs. `nil` when nothing needs writing (a to-one
    /// whose inverse is a to-many: its key is in the deleted row).
    package func detachStatement(_ relationship: RelationshipDescription, list: String) throws -> String? {
        if !relationship.isToMany {
            guard let destination = relationship.destinationEntity, let inverse = relationship.inverseRelationship, !inverse.isToMany,
                  let inverseSlot = destination.toOneSlotByName[inverse.name] else { return nil }
            let mapping = try mapping(for: destination)
            let column = mapping.columns[inverseSlot]
            return "UPDATE \(mapping.table) SET \(column) = NULL, Z_OPT = Z_OPT + 1 WHERE \(column) IN (\(list))"
        }
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let foreignKey, let order, _):
            return "UPDATE \(table) SET \(foreignKey) = NULL\(order.map { ", \($0) = NULL" } ?? ""), Z_OPT = Z_OPT + 1 WHERE \(foreignKey) IN (\(list))"
        case .joinTable(let table, let own, _, _, _):
            return "DELETE FROM \(table) WHERE \(own) IN (\(list))"
        }
    }

    /// The rows a batch delete is about to remove, by key: `Z_ENT, Z_PK`, then (`withValues`, for
    /// history tombstones) the table's columns, read by the row's own entity's mapping from
    /// column 2. In key order.
    package func deletedRowsQuery(_ root: EntityDescription, withValues: Bool, list: String) throws -> String {
        let mapping = try mapping(for: root)
        let values = withValues ? mapping.tableColumns.map { ", " + $0 }.joined() : ""
        return "SELECT Z_ENT, Z_PK\(values) FROM \(mapping.table) WHERE Z_PK IN (\(list)) ORDER BY Z_PK"
    }

    /// Removes the rows `list` of a root entity's table.
    package func removeStatement(_ root: EntityDescription, list: String) throws -> String {
        "DELETE FROM \(try mapping(for: root).table) WHERE Z_PK IN (\(list))"
    }

    /// The values an insert binds after `Z_PK, Z_ENT, Z_OPT` (`mapping.insertColumns`): the
    /// slots, then the `Z_ENT` of each to-one destination that lives in a hierarchy table.
    package func insertValues(_ values: [ManagedValue], mapping: EntityMapping) -> [ManagedValue] {
        guard !mapping.entityColumns.isEmpty else { return values }
        return values + mapping.entityColumns.keys.sorted().map { slot in
            guard case .object(let id) = values[slot] else { return .null }
            return .integer(Int64(entityNumber(of: id.entity)))
        }
    }
}
