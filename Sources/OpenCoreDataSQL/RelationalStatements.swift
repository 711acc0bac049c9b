import OpenCoreDataCore

/// Statements both SQL stores run on Core Data's layout, as ``SQLFragment``s: the same in either
/// dialect, which renders their placeholders. Statements over a list of keys bind them as a list.
extension RelationalLayout {
    /// The members of a to-many relationship of a list of sources: reads `member key, member
    /// Z_ENT, source key` rows, in source then member order.
    package func relatedQuery(_ relationship: RelationshipDescription, sources: [Int64]) throws -> SQLFragment {
        let keys = sources.map { ManagedValue.integer($0) }
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let column, let orderColumn, _):
            let order: SQLFragment = orderColumn.map { "3, \(identifier: $0), 1" } ?? "3, 1"
            let query: SQLFragment = """
                SELECT Z_PK, Z_ENT, \(identifier: column) FROM \(identifier: table) \
                WHERE \(identifier: column) IN (\(list: keys)) ORDER BY \(order)
                """
            return query
        case .joinTable(let table, let ownColumn, let otherColumn, let orderColumn, let destination):
            let mapping = try mapping(for: destination)
            let order: SQLFragment = orderColumn.map { "3, j.\(identifier: $0), 1" } ?? "3, 1"
            let query: SQLFragment = """
                SELECT d.Z_PK, d.Z_ENT, j.\(identifier: ownColumn) FROM \(identifier: table) j \
                JOIN \(identifier: mapping.table) d ON d.Z_PK = j.\(identifier: otherColumn) \
                WHERE j.\(identifier: ownColumn) IN (\(list: keys)) ORDER BY \(order)
                """
            return query
        }
    }

    /// Sets the position `order` of the member `member` of an ordered relationship of `source`.
    /// `nil` for an unordered relationship.
    package func orderUpdate(_ relationship: RelationshipDescription, order: Int64, member: Int64, source: Int64) throws -> SQLFragment? {
        let storage = try storage(of: relationship)
        guard let orderColumn = storage.orderColumn else { return nil }
        switch storage {
        case .inverseForeignKey(let table, let column, _, _):
            return """
                UPDATE \(identifier: table) SET \(identifier: orderColumn) = \(bind: .integer(order)) \
                WHERE Z_PK = \(bind: .integer(member)) AND \(identifier: column) = \(bind: .integer(source))
                """
        case .joinTable(let table, let ownColumn, let otherColumn, _, _):
            return """
                UPDATE \(identifier: table) SET \(identifier: orderColumn) = \(bind: .integer(order)) \
                WHERE \(identifier: otherColumn) = \(bind: .integer(member)) AND \(identifier: ownColumn) = \(bind: .integer(source))
                """
        }
    }

    // MARK: - Batch deletes that follow delete rules (`BatchDeleteRows`)

    /// The keys of the destinations of `relationship` from the rows `keys` of `entity` (one
    /// column; no NULLs). `nil` when `entity` has no such to-one.
    package func destinationKeysQuery(of relationship: RelationshipDescription, from entity: EntityDescription,
                                      keys: [Int64]) throws -> SQLFragment? {
        let list = keys.map { ManagedValue.integer($0) }
        if !relationship.isToMany {
            guard let slot = entity.toOneSlotByName[relationship.name] else { return nil }
            let mapping = try mapping(for: entity)
            let column = mapping.columns[slot]
            return """
                SELECT \(identifier: column) FROM \(identifier: mapping.table) \
                WHERE Z_PK IN (\(list: list)) AND \(identifier: column) IS NOT NULL
                """
        }
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let foreignKey, _, _):
            return "SELECT Z_PK FROM \(identifier: table) WHERE \(identifier: foreignKey) IN (\(list: list))"
        case .joinTable(let table, let own, let other, _, _):
            return "SELECT \(identifier: other) FROM \(identifier: table) WHERE \(identifier: own) IN (\(list: list))"
        }
    }

    /// Detaches the destinations of `relationship` from the rows `keys`: clears the to-one inverse
    /// that points at them (bumping their `Z_OPT`, and clearing their position in an ordered
    /// relationship) or removes the many-to-many pairs. `nil` when nothing needs writing (a to-one
    /// whose inverse is a to-many: its key is in the deleted row).
    package func detachStatement(_ relationship: RelationshipDescription, keys: [Int64]) throws -> SQLFragment? {
        let list = keys.map { ManagedValue.integer($0) }
        if !relationship.isToMany {
            guard let destination = relationship.destinationEntity, let inverse = relationship.inverseRelationship, !inverse.isToMany,
                  let inverseSlot = destination.toOneSlotByName[inverse.name] else { return nil }
            let mapping = try mapping(for: destination)
            let column = mapping.columns[inverseSlot]
            return """
                UPDATE \(identifier: mapping.table) SET \(identifier: column) = NULL, Z_OPT = Z_OPT + 1 \
                WHERE \(identifier: column) IN (\(list: list))
                """
        }
        switch try storage(of: relationship) {
        case .inverseForeignKey(let table, let foreignKey, let order, _):
            let clearOrder: SQLFragment = order.map { ", \(identifier: $0) = NULL" } ?? ""
            return """
                UPDATE \(identifier: table) SET \(identifier: foreignKey) = NULL\(clearOrder), Z_OPT = Z_OPT + 1 \
                WHERE \(identifier: foreignKey) IN (\(list: list))
                """
        case .joinTable(let table, let own, _, _, _):
            return "DELETE FROM \(identifier: table) WHERE \(identifier: own) IN (\(list: list))"
        }
    }

    /// The rows a batch delete is about to remove, by key: `Z_ENT, Z_PK`, then (`withValues`, for
    /// history tombstones) the table's columns, read by the row's own entity's mapping from
    /// column 2. In key order.
    package func deletedRowsQuery(_ root: EntityDescription, withValues: Bool, keys: [Int64]) throws -> SQLFragment {
        let mapping = try mapping(for: root)
        var values = SQLFragment()
        if withValues { for column in mapping.tableColumns { values += ", \(identifier: column)" } }
        return "SELECT Z_ENT, Z_PK\(values) FROM \(identifier: mapping.table) WHERE Z_PK IN (\(list: keys.map { .integer($0) })) ORDER BY Z_PK"
    }

    /// Removes the rows `keys` of a root entity's table.
    package func removeStatement(_ root: EntityDescription, keys: [Int64]) throws -> SQLFragment {
        "DELETE FROM \(identifier: try mapping(for: root).table) WHERE Z_PK IN (\(list: keys.map { .integer($0) }))"
    }

    /// `INSERT INTO <table> (<columns>) VALUES (…)`, a statement prepared once and run per row,
    /// binding each column's value in order; `orIgnore`: SQLite's `INSERT OR IGNORE` (a row that
    /// breaks a uniqueness rule is left out).
    package static func insertRowStatement(_ table: String, columns: [String], orIgnore: Bool = false) -> SQLFragment {
        let verb = orIgnore ? "INSERT OR IGNORE" : "INSERT"
        return "\(sql: verb) INTO \(identifier: table) (\(SQLFragment.identifiers(columns))) VALUES (\(parameters: columns.count))"
    }

    /// `INSERT INTO <table> (Z_PK, Z_ENT, Z_OPT, <columns>) VALUES (…, 1, …)`, a statement prepared
    /// once and run per row: it binds the key, the entity number, then each column's value.
    package static func insertStatement(_ table: String, columns: [String]) -> SQLFragment {
        var values: SQLFragment = "\(parameters: 2), 1"
        if !columns.isEmpty { values += ", \(parameters: columns.count)" }
        return "INSERT INTO \(identifier: table) (\(SQLFragment.identifiers(["Z_PK", "Z_ENT", "Z_OPT"] + columns))) VALUES (\(values))"
    }

    /// A save's update of `slots` of one row, run once per row: `UPDATE <table> SET Z_OPT = …,
    /// <each slot's column> = …, <the Z_ENT column of each changed to-one into a hierarchy> = …
    /// WHERE Z_PK = … AND Z_OPT = …`, its parameters in that order (``updateRowValues(_:mapping:)``).
    package static func updateRowStatement(_ mapping: EntityMapping, slots: [Int]) -> SQLFragment {
        var names = slots.map { mapping.columns[$0] }
        names += slots.compactMap { mapping.entityColumns[$0]?.name }
        var sets: SQLFragment = "Z_OPT = \(parameters: 1)"
        for name in names { sets += ", \(identifier: name) = \(parameters: 1)" }
        return "UPDATE \(identifier: mapping.table) SET \(sets) WHERE Z_PK = \(parameters: 1) AND Z_OPT = \(parameters: 1)"
    }

    /// The parameters of ``updateRowStatement(_:slots:)`` for one update: the new version, the
    /// slots' values, the `Z_ENT` of each changed to-one into a hierarchy, the key and the
    /// expected version.
    package func updateRowValues(_ update: StoreSaveRequest.Update, mapping: EntityMapping) -> [ManagedValue] {
        var values: [ManagedValue] = [.integer(update.expectedVersion + 1)]
        values += update.slots.map { update.values[$0] }
        for slot in update.slots where mapping.entityColumns[slot] != nil {
            if case .object(let id) = update.values[slot] {
                values.append(.integer(Int64(entityNumber(of: id.entity))))
            } else {
                values.append(.null)
            }
        }
        return values + [.integer(update.primaryKey), .integer(update.expectedVersion)]
    }

    /// A save's delete of one row, run once per row: removes the row by key if it still has the
    /// expected version; its parameters are the key, then the version.
    package static func removeRowStatement(_ table: String) -> SQLFragment {
        "DELETE FROM \(identifier: table) WHERE Z_PK = \(parameters: 1) AND Z_OPT = \(parameters: 1)"
    }

    /// A row's version and columns by key (`Z_OPT`, then `mapping.tableColumns`): what a save
    /// that met a conflict reads back. `locking` holds the row until the transaction ends
    /// (`FOR UPDATE`: PostgreSQL's; SQLite's write transaction holds the whole file).
    package static func currentRowQuery(_ mapping: EntityMapping, key: Int64, locking: Bool = false) -> SQLFragment {
        let query: SQLFragment = "SELECT \(SQLFragment.identifiers(["Z_OPT"] + mapping.tableColumns)) FROM \(identifier: mapping.table) WHERE Z_PK = \(bind: .integer(key))"
        return locking ? query + " FOR UPDATE" : query
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
