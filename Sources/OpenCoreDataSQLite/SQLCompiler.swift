import OpenCoreDataCore

/// Compiles a ``BoundPredicate`` to an SQL condition with `?` placeholders and their values.
///
/// Identifiers come only from the layout (the model); every value is a bound parameter.
/// The SQL agrees with the in-memory evaluator: `!=` is `IS NOT` (true against `NULL`), and a
/// `NOT` turns its operand's `NULL` (unknown) into false first, as memory does.
struct SQLCompiler {
    let mapping: SQLiteLayout.EntityMapping

    func compile(_ predicate: BoundPredicate) -> (sql: String, arguments: [ManagedValue]) {
        var arguments: [ManagedValue] = []
        let sql = compile(predicate, into: &arguments)
        return (sql, arguments)
    }

    private func compile(_ predicate: BoundPredicate, into arguments: inout [ManagedValue]) -> String {
        switch predicate {
        case .constant(let value):
            return value ? "1" : "0"
        case .compare(let slot, let op, let value):
            arguments.append(value)
            return "\(mapping.columns[slot]) \(sqlOperator(op)) ?"
        case .isNull(let slot, let negated):
            return "\(mapping.columns[slot]) IS \(negated ? "NOT " : "")NULL"
        case .compareSlots(let a, let op, let b):
            // Two columns may both be NULL: memory says nil == nil, so equality is NULL-safe here.
            let sqlOp = op == .equal ? "IS" : sqlOperator(op)
            return "\(mapping.columns[a]) \(sqlOp) \(mapping.columns[b])"
        case .isIn(let slot, let values):
            guard !values.isEmpty else { return "0" }
            arguments += values
            return "\(mapping.columns[slot]) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))"
        case .between(let slot, let low, let high):
            arguments += [low, high]
            return "\(mapping.columns[slot]) BETWEEN ? AND ?"
        case .stringMatch(let slot, let op, let pattern, let options):
            // The same Swift code as the in-memory evaluator, registered as an SQL function.
            arguments.append(.string(pattern))
            return "ocd_match(\(StringMatching.code(op)), \(options.rawValue), \(mapping.columns[slot]), ?)"
        case .compareExpressions(let lhs, let op, let rhs):
            return "\(expression(lhs, into: &arguments)) \(sqlOperator(op)) \(expression(rhs, into: &arguments))"
        case .primaryKeyIn(let keys):
            guard !keys.isEmpty else { return "0" }
            arguments += keys.map { .integer($0) }
            return "Z_PK IN (\(Array(repeating: "?", count: keys.count).joined(separator: ", ")))"
        case .and(let parts):
            guard !parts.isEmpty else { return "1" }
            return "(" + parts.map { compile($0, into: &arguments) }.joined(separator: " AND ") + ")"
        case .or(let parts):
            guard !parts.isEmpty else { return "0" }
            return "(" + parts.map { compile($0, into: &arguments) }.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT COALESCE(\(compile(inner, into: &arguments)), 0)"
        }
    }

    /// Arithmetic in SQL, agreeing with `BoundExpression.evaluate`: division is real division
    /// (SQLite divides integers as integers), and a division by zero is NULL in both.
    private func expression(_ expression: BoundExpression, into arguments: inout [ManagedValue]) -> String {
        switch expression {
        case .slot(let slot):
            return mapping.columns[slot]
        case .constant(let value):
            arguments.append(value)
            return "?"
        case .arithmetic(let op, let lhs, let rhs):
            let left = self.expression(lhs, into: &arguments)
            let right = self.expression(rhs, into: &arguments)
            switch op {
            case .divide: return "(CAST(\(left) AS REAL) / \(right))"
            default: return "(CAST(\(left) AS REAL) \(op.rawValue) \(right))"
            }
        }
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
