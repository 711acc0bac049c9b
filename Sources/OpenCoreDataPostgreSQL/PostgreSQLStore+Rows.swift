import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

extension PostgreSQLStore {
    /// A value as its column holds it (`SQLDialect.boundValue`: truth values as 0 and 1); a
    /// statement built as an `SQLFragment` binds its values so by itself. Dates, URLs and objects
    /// are converted by ``PostgreSQLValues`` when bound.
    static func columnValue(_ value: ManagedValue) -> ManagedValue {
        SQLDialect.postgreSQL.boundValue(value)
    }

    /// Every value of a statement, as columns hold them.
    static func columnValues(_ values: [ManagedValue]) -> [ManagedValue] {
        values.map(columnValue)
    }

    /// A cell read back as the attribute type's value (the cell as PostgreSQL typed it).
    static func attributeValue(_ cell: ManagedValue, type: AttributeType) -> ManagedValue {
        switch (type, cell) {
        case (_, .null): .null
        case (.boolean, .integer(let value)): .bool(value != 0)
        case (.date, .double(let seconds)): .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.uri, .string(let text)): URL(string: text).map { .url($0) } ?? .null
        case (.double, .integer(let value)), (.float, .integer(let value)): .double(Double(value))
        default: cell
        }
    }

    /// The values of one row whose cells from `offset` on are the table's columns
    /// (`mapping.tableColumns`): attributes by their types, to-one foreign keys as object IDs
    /// of their destination (the sub-entity its entity column names).
    func values(of row: [ManagedValue], from offset: Int, mapping: RelationalLayout.EntityMapping, layout: RelationalLayout) -> [ManagedValue] {
        mapping.types.enumerated().map { slot, type in
            let cell = row[offset + mapping.tableIndexes[slot]]
            guard type == .objectID else { return Self.attributeValue(cell, type: type) }
            guard case .integer(let key) = cell, var destination = mapping.destinations[slot] else { return .null }
            if let entityColumn = mapping.entityColumns[slot], case .integer(let number) = row[offset + entityColumn.tableIndex],
               let entity = layout.entitiesByNumber[Int(number)] {
                destination = entity
            }
            return .object(.permanent(destination, storeNumber: storeNumber, primaryKey: key))
        }
    }

    /// Inserts new rows (version 1) of one entity into `table`: each row's key and its values for
    /// `columns`, as columns hold them. A multi-row `INSERT` per up to 1,000 rows (a round trip
    /// each, not one per row).
    static func insertRows(_ session: PostgreSQLSession, into table: String, columns: [String], entityNumber: Int64,
                           rows: [(key: Int64, values: [ManagedValue])]) throws {
        var inserter = PostgreSQLRowInserter(session: session, table: "\(identifier: table)", columns: ["Z_PK", "Z_ENT", "Z_OPT"] + columns,
                                             orIgnore: false)
        for row in rows { try inserter.insert([.integer(row.key), .integer(entityNumber), .integer(1)] + row.values) }
        try inserter.finish()
    }

    /// One row of a `VALUES` list whose values carry their types (`($1::bigint, $2::text, …)`):
    /// PostgreSQL cannot infer a `VALUES` column's type from a parameter.
    static func typedRow(_ values: [ManagedValue], types: [String]) -> SQLFragment {
        "(\(typedCells(values, types: types)))"
    }

    /// Values with their types (`$1::bigint, $2::text, …`), comma-separated.
    static func typedCells(_ values: [ManagedValue], types: [String]) -> SQLFragment {
        SQLFragment.joined(zip(values, types).map { value, type in SQLFragment("\(bind: value)::\(sql: type)") }, separator: ", ")
    }

    /// `items` in groups of equal `key`, groups in the order their first item comes, items in theirs.
    static func grouped<T, Key: Hashable>(_ items: [T], by key: (T) -> Key) -> [[T]] {
        var order: [Key] = []
        var groups: [Key: [T]] = [:]
        for item in items {
            let value = key(item)
            if groups[value] == nil { order.append(value) }
            groups[value, default: []].append(item)
        }
        return order.compactMap { groups[$0] }
    }

    /// Calls `body` with consecutive chunks of `items` small enough for one multi-row statement
    /// of `width` values a row: at most 1,000 rows, and PostgreSQL's 65,535 parameters.
    static func eachMultiRowChunk<T>(of items: [T], width: Int, _ body: (ArraySlice<T>) throws -> Void) throws {
        let size = rowsPerStatement(width: width)
        for start in stride(from: items.startIndex, to: items.endIndex, by: size) {
            try body(items[start..<min(start + size, items.endIndex)])
        }
    }

    /// How many rows of `width` values one multi-row statement takes: at most 1,000, and
    /// PostgreSQL's 65,535 parameters.
    static func rowsPerStatement(width: Int) -> Int {
        max(1, min(1_000, 65_535 / max(width, 1)))
    }
}
