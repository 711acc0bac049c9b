import OpenCoreDataCore

/// Compiles a ``BoundPredicate`` to an SQL condition in a dialect, with placeholders and their
/// values.
///
/// Identifiers come only from the layout (the model); every value is a bound parameter.
/// Placeholders are numbered after the values already bound before the condition
/// (`arguments` passed in), for dialects that number them.
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
            case throughKey(alias: String, table: String, key: String)
        }
        var mapping: RelationalLayout.EntityMapping
        var access: Access
        /// The SQL of this row's primary key.
        var primaryKey: String

        /// The SQL of a column of this entity's row.
        func column(_ name: String) -> String {
            switch access {
            case .qualified(let qualifier): qualifier + "." + name
            case .throughKey(let alias, let table, let key): "(SELECT \(alias).\(name) FROM \(table) \(alias) WHERE \(alias).Z_PK = \(key))"
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
        root = Scope(mapping: mapping, access: .qualified(table), primaryKey: table + ".Z_PK")
    }

    /// The condition for `predicate`; its values are appended to `arguments`.
    package mutating func compile(_ predicate: BoundPredicate, appendingTo arguments: inout [ManagedValue]) throws -> String {
        try compile(predicate, in: root, widening: true, into: &arguments)
    }

    /// The condition and its values alone.
    package func compile(_ predicate: BoundPredicate) throws -> (sql: String, arguments: [ManagedValue]) {
        var arguments: [ManagedValue] = []
        var compiler = self
        let sql = try compiler.compile(predicate, appendingTo: &arguments)
        return (sql, arguments)
    }

    /// SQL for a sort key or other plain column reference of the fetched entity.
    package func column(forSlot slot: Int) -> String {
        root.column(root.mapping.columns[slot])
    }

    /// Appends `values` and returns their placeholders, comma-separated.
    private func bind(_ values: [ManagedValue], into arguments: inout [ManagedValue]) -> String {
        let first = arguments.count + 1
        arguments.append(contentsOf: values)
        return dialect.placeholders(from: first, count: values.count)
    }

    /// `widening`: whether a string test the dialect cannot run becomes true (the condition may
    /// select more rows) or false (under an odd number of `NOT`s, where true would select fewer).
    private mutating func compile(_ predicate: BoundPredicate, in scope: Scope, widening: Bool, into arguments: inout [ManagedValue]) throws -> String {
        func col(_ slot: Int) -> String { scope.column(scope.mapping.columns[slot]) }
        switch predicate {
        case .constant(let value):
            return dialect.literal(value)
        case .compare(let slot, let op, let value):
            return "\(col(slot)) \(sqlOperator(op)) \(bind([value], into: &arguments))"
        case .isNull(let slot, let negated):
            return "\(col(slot)) IS \(negated ? "NOT " : "")NULL"
        case .compareSlots(let a, let op, let b):
            // Two columns may both be NULL: memory says nil == nil, so equality is NULL-safe here.
            let sqlOp = op == .equal ? dialect.nullSafe(equal: true) : sqlOperator(op)
            return "\(col(a)) \(sqlOp) \(col(b))"
        case .isIn(let slot, let values):
            guard !values.isEmpty else { return dialect.literal(false) }
            return "\(col(slot)) IN (\(bind(values, into: &arguments)))"
        case .between(let slot, let low, let high):
            return "\(col(slot)) BETWEEN \(bind([low], into: &arguments)) AND \(bind([high], into: &arguments))"
        case .stringMatch(let slot, let op, let pattern, let options):
            guard dialect.evaluatesStringOperators else {
                isExact = false
                return dialect.literal(widening)
            }
            // The same Swift code as the in-memory evaluator, registered as an SQL function.
            return "ocd_match(\(StringMatching.code(op)), \(options.rawValue), \(col(slot)), \(bind([.string(pattern)], into: &arguments)))"
        case .compareExpressions(let lhs, let op, let rhs):
            if !dialect.evaluatesStringOperators, lhs.testsStrings || rhs.testsStrings {
                // A count or sum over members filtered by a string test moves both ways when the
                // test widens: the comparison is left to Swift whole.
                isExact = false
                return dialect.literal(widening)
            }
            // Either side may be NULL (an aggregate over no members, a missing bound): memory says
            // nil == nil, so equality is NULL-safe here too.
            let sqlOp = op == .equal ? dialect.nullSafe(equal: true) : sqlOperator(op)
            return "\(try expression(lhs, in: scope, into: &arguments)) \(sqlOp) \(try expression(rhs, in: scope, into: &arguments))"
        case .primaryKeyIn(let keys):
            guard !keys.isEmpty else { return dialect.literal(false) }
            return "\(scope.primaryKey) IN (\(bind(keys.map { .integer($0) }, into: &arguments)))"
        case .isObject(let ids):
            // A row is a saved object: objects not saved yet match none.
            return try compile(.primaryKeyIn(ids.compactMap(\.primaryKey)), in: scope, widening: widening, into: &arguments)
        case .and(let parts):
            guard !parts.isEmpty else { return dialect.literal(true) }
            var compiled: [String] = []
            for part in parts { compiled.append(try compile(part, in: scope, widening: widening, into: &arguments)) }
            return "(" + compiled.joined(separator: " AND ") + ")"
        case .or(let parts):
            guard !parts.isEmpty else { return dialect.literal(false) }
            var compiled: [String] = []
            for part in parts { compiled.append(try compile(part, in: scope, widening: widening, into: &arguments)) }
            return "(" + compiled.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT COALESCE(\(try compile(inner, in: scope, widening: !widening, into: &arguments)), \(dialect.literal(false)))"
        case .toOne(let slot, let destination, let inner):
            return try compile(inner, in: try toOneScope(from: scope, slot: slot, destination: destination), widening: widening, into: &arguments)
        case .anyMember(let relationship, let inner):
            let (from, member) = try memberSource(relationship, of: scope)
            let condition = try compile(inner, in: member, widening: widening, into: &arguments)
            return "EXISTS (SELECT 1 FROM \(from) AND \(condition))"
        }
    }

    /// Arithmetic in SQL, agreeing with `BoundExpression.evaluate`: division is real division
    /// (SQLite divides integers as integers), and a division by zero is NULL in both.
    private mutating func expression(_ expression: BoundExpression, in scope: Scope, into arguments: inout [ManagedValue]) throws -> String {
        switch expression {
        case .slot(let slot):
            return scope.column(scope.mapping.columns[slot])
        case .constant(let value):
            return bind([value], into: &arguments)
        case .arithmetic(let op, let lhs, let rhs):
            let left = try self.expression(lhs, in: scope, into: &arguments)
            let right = try self.expression(rhs, in: scope, into: &arguments)
            switch op {
            case .divide: return dialect.divide(left, by: right)
            default: return "(\(dialect.real(left)) \(op.rawValue) \(right))"
            }
        case .toOne(let slot, let destination, let inner):
            return try self.expression(inner, in: try toOneScope(from: scope, slot: slot, destination: destination), into: &arguments)
        case .aggregate(let function, let relationship, let value, let filter):
            let (from, member) = try memberSource(relationship, of: scope)
            var sql = "(SELECT "
            switch function {
            case .count: sql += "COUNT(*)"
            case .sum: sql += dialect.total(try self.expression(valueOrFail(value), in: member, into: &arguments))
            case .average: sql += dialect.average(try self.expression(valueOrFail(value), in: member, into: &arguments))
            case .minimum: sql += "MIN(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            case .maximum: sql += "MAX(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            }
            sql += " FROM \(from)"
            if let filter { sql += " AND \(try compile(filter, in: member, widening: true, into: &arguments))" }
            return sql + ")"
        }
    }

    /// The SQL of the value a sort key orders by: the fetched row's column, or the column read
    /// through the key's to-one path by scalar subqueries (NULL without a destination, which
    /// both dialects order as ``SQLDialect/order(_:ascending:)`` says).
    package mutating func sortValue(_ key: StoreSortKey) throws -> String {
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
    private mutating func memberSource(_ relationship: RelationshipDescription, of scope: Scope) throws -> (String, Scope) {
        depth += 1
        let alias = "t\(depth)"
        let member: (EntityDescription) throws -> Scope = { [layout] destination in
            let mapping = try layout.mapping(for: destination)
            return Scope(mapping: mapping, access: .qualified(alias), primaryKey: alias + ".Z_PK")
        }
        switch try layout.storage(of: relationship) {
        case .inverseForeignKey(let table, let column, _, let destination):
            let scope2 = try member(destination)
            return ("\(table) \(alias) WHERE \(alias).\(column) = \(scope.primaryKey)\(entityFilter(destination, alias: alias))", scope2)
        case .joinTable(let table, let ownColumn, let otherColumn, _, let destination):
            let mapping = try layout.mapping(for: destination)
            let join = "j\(depth)"
            return ("\(table) \(join) JOIN \(mapping.table) \(alias) ON \(alias).Z_PK = \(join).\(otherColumn) WHERE \(join).\(ownColumn) = \(scope.primaryKey)\(entityFilter(destination, alias: alias))",
                    try member(destination))
        }
    }

    /// Restricts a hierarchy table to the destination entity (and its sub-entities).
    private func entityFilter(_ destination: EntityDescription, alias: String) -> String {
        guard destination.superentity != nil, let mapping = try? layout.mapping(for: destination) else { return "" }
        return " AND \(alias).Z_ENT IN (\(mapping.entityNumbers.map(String.init).joined(separator: ", ")))"
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
        case .constant, .compare, .isNull, .compareSlots, .isIn, .between, .primaryKeyIn, .isObject: false
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
