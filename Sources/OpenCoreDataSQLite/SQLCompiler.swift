import OpenCoreDataCore

/// Compiles a ``BoundPredicate`` to an SQL condition with `?` placeholders and their values.
///
/// Identifiers come only from the layout (the model); every value is a bound parameter.
/// The SQL agrees with the in-memory evaluator: `!=` is `IS NOT` (true against `NULL`), and a
/// `NOT` turns its operand's `NULL` (unknown) into false first, as memory does.
///
/// Relationships compile to subqueries, so that a predicate never multiplies rows: a to-one key
/// path reads the destination's column through a scalar subquery (NULL without a destination,
/// as memory sees nil), `ANY` is `EXISTS`, and collection operators are aggregates. Columns are
/// qualified: the fetched table by its name, each subquery's table by an alias `t1`, `t2`, ….
struct SQLCompiler {
    /// How the columns of one entity are reached from the current position in the query.
    private struct Scope {
        enum Access {
            /// Columns are `<qualifier>.<column>`.
            case qualified(String)
            /// Columns are read by a scalar subquery on the destination's key.
            case throughKey(alias: String, table: String, key: String)
        }
        var mapping: SQLiteLayout.EntityMapping
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

    let layout: SQLiteLayout
    private let root: Scope
    private var depth = 0

    /// A compiler for conditions on rows of `mapping`'s table, referenced by its name.
    init(layout: SQLiteLayout, mapping: SQLiteLayout.EntityMapping) {
        self.layout = layout
        let table = mapping.table
        root = Scope(mapping: mapping, access: .qualified(table), primaryKey: table + ".Z_PK")
    }

    func compile(_ predicate: BoundPredicate) throws -> (sql: String, arguments: [ManagedValue]) {
        var arguments: [ManagedValue] = []
        var compiler = self
        let sql = try compiler.compile(predicate, in: root, into: &arguments)
        return (sql, arguments)
    }

    /// SQL for a sort key or other plain column reference of the fetched entity.
    func column(forSlot slot: Int) -> String {
        root.column(root.mapping.columns[slot])
    }

    private mutating func compile(_ predicate: BoundPredicate, in scope: Scope, into arguments: inout [ManagedValue]) throws -> String {
        func col(_ slot: Int) -> String { scope.column(scope.mapping.columns[slot]) }
        switch predicate {
        case .constant(let value):
            return value ? "1" : "0"
        case .compare(let slot, let op, let value):
            arguments.append(value)
            return "\(col(slot)) \(sqlOperator(op)) ?"
        case .isNull(let slot, let negated):
            return "\(col(slot)) IS \(negated ? "NOT " : "")NULL"
        case .compareSlots(let a, let op, let b):
            // Two columns may both be NULL: memory says nil == nil, so equality is NULL-safe here.
            let sqlOp = op == .equal ? "IS" : sqlOperator(op)
            return "\(col(a)) \(sqlOp) \(col(b))"
        case .isIn(let slot, let values):
            guard !values.isEmpty else { return "0" }
            arguments += values
            return "\(col(slot)) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))"
        case .between(let slot, let low, let high):
            arguments += [low, high]
            return "\(col(slot)) BETWEEN ? AND ?"
        case .stringMatch(let slot, let op, let pattern, let options):
            // The same Swift code as the in-memory evaluator, registered as an SQL function.
            arguments.append(.string(pattern))
            return "ocd_match(\(StringMatching.code(op)), \(options.rawValue), \(col(slot)), ?)"
        case .compareExpressions(let lhs, let op, let rhs):
            // Either side may be NULL (an aggregate over no members, a missing bound): memory says
            // nil == nil, so equality is NULL-safe here too.
            let sqlOp = op == .equal ? "IS" : sqlOperator(op)
            return "\(try expression(lhs, in: scope, into: &arguments)) \(sqlOp) \(try expression(rhs, in: scope, into: &arguments))"
        case .primaryKeyIn(let keys):
            guard !keys.isEmpty else { return "0" }
            arguments += keys.map { .integer($0) }
            return "\(scope.primaryKey) IN (\(Array(repeating: "?", count: keys.count).joined(separator: ", ")))"
        case .and(let parts):
            guard !parts.isEmpty else { return "1" }
            var compiled: [String] = []
            for part in parts { compiled.append(try compile(part, in: scope, into: &arguments)) }
            return "(" + compiled.joined(separator: " AND ") + ")"
        case .or(let parts):
            guard !parts.isEmpty else { return "0" }
            var compiled: [String] = []
            for part in parts { compiled.append(try compile(part, in: scope, into: &arguments)) }
            return "(" + compiled.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT COALESCE(\(try compile(inner, in: scope, into: &arguments)), 0)"
        case .toOne(let slot, let destination, let inner):
            return try compile(inner, in: try toOneScope(from: scope, slot: slot, destination: destination), into: &arguments)
        case .anyMember(let relationship, let inner):
            let (from, member) = try memberSource(relationship, of: scope)
            let condition = try compile(inner, in: member, into: &arguments)
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
            arguments.append(value)
            return "?"
        case .arithmetic(let op, let lhs, let rhs):
            let left = try self.expression(lhs, in: scope, into: &arguments)
            let right = try self.expression(rhs, in: scope, into: &arguments)
            switch op {
            case .divide: return "(CAST(\(left) AS REAL) / \(right))"
            default: return "(CAST(\(left) AS REAL) \(op.rawValue) \(right))"
            }
        case .toOne(let slot, let destination, let inner):
            return try self.expression(inner, in: try toOneScope(from: scope, slot: slot, destination: destination), into: &arguments)
        case .aggregate(let function, let relationship, let value, let filter):
            let (from, member) = try memberSource(relationship, of: scope)
            var sql = "(SELECT "
            switch function {
            case .count: sql += "COUNT(*)"
            case .sum: sql += "TOTAL(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            case .average: sql += "AVG(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            case .minimum: sql += "MIN(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            case .maximum: sql += "MAX(\(try self.expression(valueOrFail(value), in: member, into: &arguments)))"
            }
            sql += " FROM \(from)"
            if let filter { sql += " AND \(try compile(filter, in: member, into: &arguments))" }
            return sql + ")"
        }
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
        case .notEqual: "IS NOT"
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
