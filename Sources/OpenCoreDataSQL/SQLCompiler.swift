import OpenCoreDataCore

/// Compiles a ``BoundPredicate`` to an SQL condition in a dialect: an ``SQLFragment`` whose
/// values are bound in it, so that it composes into any statement.
///
/// Identifiers come only from the layout (the model); every value is a bound parameter.
/// The SQL agrees with the in-memory evaluator: `!=` is `IS NOT` (true against `NULL`), and a
/// `NOT` turns its operand's `NULL` (unknown) into false first, as memory does.
///
/// Relationships compile to subqueries, so that a predicate never multiplies rows: a to-one key
/// path reads the destination's column through a scalar subquery (NULL without a destination,
/// as memory sees nil), `ANY` is `EXISTS`, and collection operators are aggregates. Columns are
/// qualified: the fetched table by its name, each subquery's table by an alias `t1`, `t2`, ….
///
/// A dialect without the Swift string operators (``SQLDialect/evaluatesStringOperators``) gets
/// a condition that selects a superset of the matching rows: each string test becomes true where
/// more rows can only help and false under a `NOT`, and a comparison over a filtered aggregate
/// with such a test becomes true or false whole. ``isExact`` then says the rows must be tested in
/// Swift.
package struct SQLCompiler {
    /// How the columns of one entity are reached from the current position in the query.
    private struct Scope {
        enum Access {
            /// Columns are `<qualifier>.<column>`.
            case qualified(String)
            /// Columns are read by a scalar subquery on the destination's key.
            case throughKey(alias: String, table: String, key: SQLFragment)
        }
        var mapping: RelationalLayout.EntityMapping
        var access: Access
        /// The SQL of this row's primary key.
        var primaryKey: SQLFragment

        /// The SQL of a column of this entity's row.
        func column(_ name: String) -> SQLFragment {
            switch access {
            case .qualified(let qualifier):
                "\(identifier: qualifier).\(identifier: name)"
            case .throughKey(let alias, let table, let key):
                """
                (SELECT \(identifier: alias).\(identifier: name) FROM \(identifier: table) \(identifier: alias) \
                WHERE \(identifier: alias).Z_PK = \(key))
                """
            }
        }
    }

    let layout: RelationalLayout
    let dialect: SQLDialect
    private let root: Scope
    private var depth = 0
    /// Whether the condition selects exactly the matching rows (no string test was widened).
    package private(set) var isExact = true

    /// A compiler for conditions on rows of `mapping`'s table, referenced by its name.
    package init(layout: RelationalLayout, mapping: RelationalLayout.EntityMapping, dialect: SQLDialect) {
        self.layout = layout
        self.dialect = dialect
        let table = mapping.table
        root = Scope(mapping: mapping, access: .qualified(table), primaryKey: "\(identifier: table).Z_PK")
    }

    /// The condition for `predicate`, its values bound in it.
    package mutating func condition(_ predicate: BoundPredicate) throws -> SQLFragment {
        try compile(predicate, in: root, widening: true)
    }

    /// SQL for a sort key or other plain column reference of the fetched entity.
    package func column(forSlot slot: Int) -> SQLFragment {
        root.column(root.mapping.columns[slot])
    }

    /// `widening`: whether a string test the dialect cannot run becomes true (the condition may
    /// select more rows) or false (under an odd number of `NOT`s, where true would select fewer).
    private mutating func compile(_ predicate: BoundPredicate, in scope: Scope, widening: Bool) throws -> SQLFragment {
        func col(_ slot: Int) -> SQLFragment { scope.column(scope.mapping.columns[slot]) }
        switch predicate {
        case .constant(let value):
            return SQLFragment(sql: dialect.literal(value))
        case .compare(let slot, let op, let value):
            return "\(col(slot)) \(sql: sqlOperator(op)) \(bind: value)"
        case .isNull(let slot, let negated):
            return "\(col(slot)) IS \(sql: negated ? "NOT " : "")NULL"
        case .compareSlots(let a, let op, let b):
            // Two columns may both be NULL: memory says nil == nil, so equality is NULL-safe here.
            let sqlOp = op == .equal ? dialect.nullSafe(equal: true) : sqlOperator(op)
            return "\(col(a)) \(sql: sqlOp) \(col(b))"
        case .isIn(let slot, let values):
            guard !values.isEmpty else { return SQLFragment(sql: dialect.literal(false)) }
            return "\(col(slot)) IN (\(list: values))"
        case .between(let slot, let low, let high):
            return "\(col(slot)) BETWEEN \(bind: low) AND \(bind: high)"
        case .stringMatch(let slot, let op, let pattern, let options):
            guard dialect.evaluatesStringOperators else {
                isExact = false
                return SQLFragment(sql: dialect.literal(widening))
            }
            // The same Swift code as the in-memory evaluator, registered as an SQL function.
            return "ocd_match(\(number: Int(StringMatching.code(op))), \(number: Int(options.rawValue)), \(col(slot)), \(bind: .string(pattern)))"
        case .compareExpressions(let lhs, let op, let rhs):
            if !dialect.evaluatesStringOperators, lhs.testsStrings || rhs.testsStrings {
                // A count or sum over members filtered by a string test moves both ways when the
                // test widens: the comparison is left to Swift whole.
                isExact = false
                return SQLFragment(sql: dialect.literal(widening))
            }
            // Either side may be NULL (an aggregate over no members, a missing bound): memory says
            // nil == nil, so equality is NULL-safe here too.
            let sqlOp = op == .equal ? dialect.nullSafe(equal: true) : sqlOperator(op)
            let left = try expression(lhs, in: scope)
            return "\(left) \(sql: sqlOp) \(try expression(rhs, in: scope))"
        case .primaryKeyIn(let keys):
            guard !keys.isEmpty else { return SQLFragment(sql: dialect.literal(false)) }
            return "\(scope.primaryKey) IN (\(list: keys.map { .integer($0) }))"
        case .primaryKeyRange(let range):
            return "\(scope.primaryKey) BETWEEN \(bind: .integer(range.lowerBound)) AND \(bind: .integer(range.upperBound))"
        case .isObject(let ids):
            // A row is a saved object: objects not saved yet match none.
            return try compile(.primaryKeyIn(ids.compactMap(\.primaryKey)), in: scope, widening: widening)
        case .and(let parts):
            guard !parts.isEmpty else { return SQLFragment(sql: dialect.literal(true)) }
            var compiled: [SQLFragment] = []
            for part in parts { compiled.append(try compile(part, in: scope, widening: widening)) }
            return "(\(SQLFragment.joined(compiled, separator: " AND ")))"
        case .or(let parts):
            guard !parts.isEmpty else { return SQLFragment(sql: dialect.literal(false)) }
            var compiled: [SQLFragment] = []
            for part in parts { compiled.append(try compile(part, in: scope, widening: widening)) }
            return "(\(SQLFragment.joined(compiled, separator: " OR ")))"
        case .not(let inner):
            return "NOT COALESCE(\(try compile(inner, in: scope, widening: !widening)), \(sql: dialect.literal(false)))"
        case .toOne(let slot, let destination, let inner):
            return try compile(inner, in: try toOneScope(from: scope, slot: slot, destination: destination), widening: widening)
        case .anyMember(let relationship, let inner):
            let (from, member) = try memberSource(relationship, of: scope)
            let condition = try compile(inner, in: member, widening: widening)
            return "EXISTS (SELECT 1 FROM \(from) AND \(condition))"
        }
    }

    /// Arithmetic in SQL, agreeing with `BoundExpression.evaluate`: division is real division
    /// (SQLite divides integers as integers), and a division by zero is NULL in both.
    private mutating func expression(_ expression: BoundExpression, in scope: Scope) throws -> SQLFragment {
        switch expression {
        case .slot(let slot):
            return scope.column(scope.mapping.columns[slot])
        case .constant(let value):
            return "\(bind: value)"
        case .arithmetic(let op, let lhs, let rhs):
            let left = try self.expression(lhs, in: scope)
            let right = try self.expression(rhs, in: scope)
            switch op {
            case .divide: return dialect.divide(left, by: right)
            default: return "(\(dialect.real(left)) \(sql: op.rawValue) \(right))"
            }
        case .toOne(let slot, let destination, let inner):
            return try self.expression(inner, in: try toOneScope(from: scope, slot: slot, destination: destination))
        case .aggregate(let function, let relationship, let value, let filter):
            let (from, member) = try memberSource(relationship, of: scope)
            var sql: SQLFragment = "(SELECT "
            switch function {
            case .count: sql.append(sql: "COUNT(*)")
            case .sum: sql += dialect.total(try self.expression(valueOrFail(value), in: member))
            case .average: sql += dialect.average(try self.expression(valueOrFail(value), in: member))
            case .minimum: sql += "MIN(\(try self.expression(valueOrFail(value), in: member)))"
            case .maximum: sql += "MAX(\(try self.expression(valueOrFail(value), in: member)))"
            }
            sql += " FROM \(from)"
            if let filter { sql += " AND \(try compile(filter, in: member, widening: true))" }
            return sql + ")"
        }
    }

    /// The SQL of the value a sort key orders by: the fetched row's column, or the column read
    /// through the key's to-one path by scalar subqueries (NULL without a destination, which
    /// both dialects order as ``SQLDialect/order(_:ascending:)`` says).
    package mutating func sortValue(_ key: StoreSortKey) throws -> SQLFragment {
        var scope = root
        for hop in key.path { scope = try toOneScope(from: scope, slot: hop.slot, destination: hop.destination) }
        return scope.column(scope.mapping.columns[key.slot])
    }

    private func valueOrFail(_ value: BoundExpression?) throws -> BoundExpression {
        guard let value else { throw CoreDataError(.coreData, "A collection operator other than @count needs a key after it.") }
        return value
    }

    /// The destination of a to-one: each of its columns read by a scalar subquery on the key.
    private mutating func toOneScope(from scope: Scope, slot: Int, destination: EntityDescription) throws -> Scope {
        let mapping = try layout.mapping(for: destination)
        let key = scope.column(scope.mapping.columns[slot])
        depth += 1
        let alias = "t\(depth)"
        return Scope(mapping: mapping, access: .throughKey(alias: alias, table: mapping.table, key: key), primaryKey: key)
    }

    /// `<tables> WHERE <link to the source row>` for the members of a to-many, and their scope.
    private mutating func memberSource(_ relationship: RelationshipDescription, of scope: Scope) throws -> (SQLFragment, Scope) {
        depth += 1
        let alias = "t\(depth)"
        let member: (EntityDescription) throws -> Scope = { [layout] destination in
            let mapping = try layout.mapping(for: destination)
            return Scope(mapping: mapping, access: .qualified(alias), primaryKey: "\(identifier: alias).Z_PK")
        }
        switch try layout.storage(of: relationship) {
        case .inverseForeignKey(let table, let column, _, let destination):
            let from: SQLFragment = "\(identifier: table) \(identifier: alias) WHERE \(identifier: alias).\(identifier: column) = \(scope.primaryKey)"
            return (from + entityFilter(destination, alias: alias), try member(destination))
        case .joinTable(let table, let ownColumn, let otherColumn, _, let destination):
            let mapping = try layout.mapping(for: destination)
            let join = "j\(depth)"
            let from: SQLFragment = """
                \(identifier: table) \(identifier: join) JOIN \(identifier: mapping.table) \(identifier: alias) \
                ON \(identifier: alias).Z_PK = \(identifier: join).\(identifier: otherColumn) \
                WHERE \(identifier: join).\(identifier: ownColumn) = \(scope.primaryKey)
                """
            return (from + entityFilter(destination, alias: alias), try member(destination))
        }
    }

    /// Restricts a hierarchy table to the destination entity (and its sub-entities).
    private func entityFilter(_ destination: EntityDescription, alias: String) -> SQLFragment {
        guard destination.superentity != nil, let mapping = try? layout.mapping(for: destination) else { return SQLFragment() }
        return " AND \(identifier: alias).Z_ENT IN (\(SQLFragment.numbers(mapping.entityNumbers)))"
    }

    private func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: "="
        case .notEqual: dialect.nullSafe(equal: false)
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .in: "IN"
        case .between: "BETWEEN"
        case .contains, .beginsWith, .endsWith, .like, .matches: "="    // compiled as ocd_match
        }
    }
}

extension BoundPredicate {
    /// Whether the predicate has a string operator anywhere (through relationships too).
    var testsStrings: Bool {
        switch self {
        case .stringMatch: true
        case .constant, .compare, .isNull, .compareSlots, .isIn, .between, .primaryKeyIn, .primaryKeyRange, .isObject: false
        case .compareExpressions(let lhs, _, let rhs): lhs.testsStrings || rhs.testsStrings
        case .and(let parts), .or(let parts): parts.contains { $0.testsStrings }
        case .not(let inner), .toOne(_, _, let inner), .anyMember(_, let inner): inner.testsStrings
        }
    }
}

extension BoundExpression {
    /// Whether the expression filters members by a string operator.
    var testsStrings: Bool {
        switch self {
        case .slot, .constant: false
        case .arithmetic(_, let lhs, let rhs): lhs.testsStrings || rhs.testsStrings
        case .toOne(_, _, let inner): inner.testsStrings
        case .aggregate(_, _, let value, let filter): (value?.testsStrings ?? false) || (filter?.testsStrings ?? false)
        }
    }
}
