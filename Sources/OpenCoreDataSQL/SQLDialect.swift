import OpenCoreDataCore

/// What differs between the SQL the SQLite and PostgreSQL stores speak, so that one layout and
/// one predicate compiler serve both (see `docs/PostgreSQL.md`, "Decided for the store").
///
/// Identifiers are written bare in both: every name comes from the layout, which makes it from
/// validated model names (`Z` followed by letters, digits and `_`), so no name needs quotes, and
/// PostgreSQL folds each one to lower case the same way wherever it appears.
package enum SQLDialect: Sendable {
    case sqlite
    case postgreSQL

    /// Writes the placeholders of `count` bound values from the `first`-th (1-based),
    /// comma-separated: `?, ?, …` or `$first, $first+1, …`. Only ``SQLFragment`` renders
    /// placeholders: no statement numbers them by hand. Written as UTF-8 bytes: a batch of rows
    /// by key binds 500 values a query, and appending to a String (or joining an array of them)
    /// cost ~600 instructions a placeholder (now ~65).
    func writePlaceholders(from first: Int, count: Int, into text: inout [UInt8]) {
        text.reserveCapacity(text.count + count * (self == .sqlite ? 3 : 8))
        for number in first..<(first + count) {
            if number > first {
                // Two appends: appending a String's UTF-8 view costs ~170 instructions.
                text.append(UInt8(ascii: ","))
                text.append(UInt8(ascii: " "))
            }
            switch self {
            case .sqlite:
                text.append(UInt8(ascii: "?"))
            case .postgreSQL:
                text.append(UInt8(ascii: "$"))
                let start = text.count
                var rest = number
                repeat {
                    text.append(UInt8(ascii: "0") + UInt8(rest % 10))
                    rest /= 10
                } while rest > 0
                text[start...].reverse()
            }
        }
    }

    /// A value as the dialect binds it: PostgreSQL keeps truth values in `bigint` columns as 0
    /// and 1, as Core Data's SQLite stores keep them (so that comparisons, sums and sorts agree);
    /// SQLite binds them as those integers itself.
    package func boundValue(_ value: ManagedValue) -> ManagedValue {
        if self == .postgreSQL, case .bool(let flag) = value { return .integer(flag ? 1 : 0) }
        return value
    }

    /// An `ORDER BY` term: NULL first going up and last going down, as SQLite and
    /// `ManagedValue.compare` order it (PostgreSQL's default is the other way).
    package func order(_ value: SQLFragment, ascending: Bool) -> SQLFragment {
        switch self {
        case .sqlite: "\(value) \(sql: ascending ? "ASC" : "DESC")"
        case .postgreSQL: "\(value) \(sql: ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")"
        }
    }

    /// A truth value as a condition.
    package func literal(_ value: Bool) -> String {
        switch self {
        case .sqlite: value ? "1" : "0"
        case .postgreSQL: value ? "TRUE" : "FALSE"
        }
    }

    /// Equality (or its negation) that is true when both sides are NULL.
    package func nullSafe(equal: Bool) -> String {
        switch self {
        case .sqlite: equal ? "IS" : "IS NOT"
        case .postgreSQL: equal ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM"
        }
    }

    /// `x` as a floating-point number (for real division and sums).
    package func real(_ value: SQLFragment) -> SQLFragment {
        switch self {
        case .sqlite: "CAST(\(value) AS REAL)"
        case .postgreSQL: "CAST(\(value) AS double precision)"
        }
    }

    /// Real division, NULL when dividing by zero (SQLite's answer, and memory's nil; PostgreSQL
    /// would raise an error).
    package func divide(_ lhs: SQLFragment, by rhs: SQLFragment) -> SQLFragment {
        switch self {
        case .sqlite: "(\(real(lhs)) / \(rhs))"
        case .postgreSQL: "(\(real(lhs)) / NULLIF(\(rhs), 0))"
        }
    }

    /// The sum of `x` over a group, 0.0 for no rows (SQLite's `TOTAL`).
    package func total(_ value: SQLFragment) -> SQLFragment {
        switch self {
        case .sqlite: "TOTAL(\(value))"
        case .postgreSQL: "COALESCE(SUM(CAST(\(value) AS double precision)), 0)"
        }
    }

    /// The average of `x`, as a floating-point number.
    package func average(_ value: SQLFragment) -> SQLFragment {
        switch self {
        case .sqlite: "AVG(\(value))"
        case .postgreSQL: "AVG(CAST(\(value) AS double precision))"
        }
    }

    /// Whether string operators (`CONTAINS`, `LIKE`, `MATCHES`, `[cd]`) run in SQL with the
    /// in-memory evaluator's own code (SQLite's `ocd_match`). Without it the compiler writes a
    /// condition that selects a superset, and the store tests the rows in Swift.
    package var evaluatesStringOperators: Bool { self == .sqlite }

    /// The column type of an attribute type.
    package func columnType(_ type: AttributeType) -> String {
        switch self {
        case .sqlite:
            // The column types Core Data declares.
            switch type {
            case .integer16, .integer32, .integer64, .boolean, .objectID: return "INTEGER"
            case .decimal: return "DECIMAL"
            case .double, .float: return "FLOAT"
            case .string, .uri: return "VARCHAR"
            case .date: return "TIMESTAMP"
            case .binaryData, .uuid, .transformable: return "BLOB"
            }
        case .postgreSQL:
            switch type {
            case .integer16, .integer32, .integer64, .boolean, .objectID: return "bigint"
            case .decimal: return "numeric"
            case .double, .float, .date: return "double precision"
            // Byte order, as SQLite compares text (and as Core Data's BINARY collation sorts).
            case .string, .uri: return "text COLLATE \"C\""
            case .uuid: return "uuid"
            case .binaryData, .transformable: return "bytea"
            }
        }
    }

    /// `CREATE TABLE` for an entity table of `layout`.
    package func createTable(_ table: RelationalLayout.Table) -> SQLFragment {
        let key = self == .sqlite ? "INTEGER PRIMARY KEY" : "bigint PRIMARY KEY"
        let integer = columnType(.integer64)
        let columns = [("Z_PK", key), ("Z_ENT", integer), ("Z_OPT", integer)] + table.columns.map { ($0.name, columnType($0.type)) }
        let definitions = columns.map { name, type in SQLFragment("\(identifier: name) \(sql: type)") }
        return "CREATE TABLE \(identifier: table.name) ( \(SQLFragment.joined(definitions, separator: ", ")) )"
    }

    /// `CREATE TABLE` for a many-to-many join table.
    package func createTable(_ table: RelationalLayout.JoinTable) -> SQLFragment {
        let integer = self == .sqlite ? "INTEGER" : columnType(.integer64)
        let (own, other) = table.keyColumns
        let definitions = ([own, other] + table.orderColumns).map { SQLFragment("\(identifier: $0) \(sql: integer)") }
        let key = SQLFragment.identifiers([own, other])
        return "CREATE TABLE \(identifier: table.name) ( \(SQLFragment.joined(definitions, separator: ", ")), PRIMARY KEY (\(key)) )"
    }

    /// `name` as the database keeps an unquoted identifier. SQLite keeps it as written.
    /// PostgreSQL folds ASCII letters to lower case and keeps 63 bytes: longer names are cut to
    /// 46 and end in a hash of the whole, so that two long names never become one (the server
    /// would cut both to the same 63 bytes, and `IF NOT EXISTS` would skip the second).
    package func identifier(_ name: String) -> String {
        guard self == .postgreSQL else { return name }
        let lowered = String(name.map { $0.isASCII ? Character($0.lowercased()) : $0 })
        guard lowered.utf8.count > 63 else { return lowered }
        var cut = ""
        for character in lowered {
            guard cut.utf8.count + character.utf8.count <= 46 else { break }
            cut.append(character)
        }
        return cut + "_" + Self.digest(name)
    }

    /// A hexadecimal FNV-1a hash of `text` (16 digits at most), for names: the same in every
    /// process and on every machine.
    package static func digest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// `CREATE [UNIQUE] INDEX IF NOT EXISTS` for an index of the layout.
    package func createIndex(_ index: RelationalLayout.Index) -> SQLFragment {
        let columns = index.columns.map { column -> SQLFragment in
            guard index.collated else { return "\(identifier: column.name)" }
            let order = column.ascending ? "ASC" : "DESC"
            return self == .sqlite ? "\(identifier: column.name) COLLATE BINARY \(sql: order)" : "\(identifier: column.name) \(sql: order)"
        }
        return """
            CREATE \(sql: index.isUnique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(identifier: identifier(index.name)) \
            ON \(identifier: index.table) (\(SQLFragment.joined(columns, separator: ", ")))
            """
    }

    /// Every `CREATE TABLE` of the layout: entity tables, then join tables.
    package func createTables(_ layout: RelationalLayout) -> [SQLFragment] {
        layout.tables.map(createTable) + layout.joinTables.map(createTable)
    }
}
