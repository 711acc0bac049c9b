import OpenCoreDataCore
import OpenCoreDataSQL

extension SQLiteStore {
    /// The values of one row, read from a statement whose columns from `offset` on are the
    /// table's columns (`mapping.tableColumns`): attributes as stored, to-one foreign keys as
    /// object IDs of their destination (the sub-entity the row's entity column names).
    func readValues(_ statement: SQLiteStatement, from offset: Int32, mapping: RelationalLayout.EntityMapping,
                    layout: RelationalLayout) -> [ManagedValue] {
        var values: [ManagedValue] = []
        values.reserveCapacity(mapping.types.count)
        guard mapping.hasToOnes else {
            if mapping.columnsInSlotOrder {
                for (slot, type) in mapping.types.enumerated() { values.append(statement.value(at: offset + Int32(slot), type: type)) }
            } else {
                let indexes = mapping.tableIndexes
                for (slot, type) in mapping.types.enumerated() { values.append(statement.value(at: offset + Int32(indexes[slot]), type: type)) }
            }
            return values
        }
        for (slot, type) in mapping.types.enumerated() {
            let column = offset + Int32(mapping.tableIndexes[slot])
            guard type == .objectID else {
                values.append(statement.value(at: column, type: type))
                continue
            }
            guard !statement.isNull(at: column), var destination = mapping.destinations[slot] else {
                values.append(.null)
                continue
            }
            if let entityColumn = mapping.entityColumns[slot], !statement.isNull(at: offset + Int32(entityColumn.tableIndex)),
               let entity = layout.entitiesByNumber[Int(statement.int64(at: offset + Int32(entityColumn.tableIndex)))] {
                destination = entity
            }
            values.append(.object(.permanent(destination, storeNumber: storeNumber, primaryKey: statement.int64(at: column))))
        }
        return values
    }

    /// The entity of a row: the one its `Z_ENT` names when the request's entity shares its table
    /// with others, else the request's.
    func rowEntity(_ number: Int64, requested: EntityDescription, layout: RelationalLayout) -> EntityDescription {
        layout.entitiesByNumber[Int(number)] ?? requested
    }
}
