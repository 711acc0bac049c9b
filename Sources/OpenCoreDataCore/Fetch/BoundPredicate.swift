import Foundation

/// A predicate resolved against one entity: keys are attribute slots, values are converted to
/// the attributes' stored form. The SQLite store compiles it to SQL; the in-memory store and
/// pending-change fetches evaluate it with ``evaluate(_:primaryKey:)``. Both read the same
/// tree, so the two evaluators share one meaning.
package indirect enum BoundPredicate: Sendable {
    case constant(Bool)
    /// `slot op value`; `value` is never `.null` for ordering operators.
    case compare(slot: Int, op: ComparisonOperator, value: ManagedValue)
    /// `slot == nil` (or `!=` when `negated`).
    case isNull(slot: Int, negated: Bool)
    /// `slot op otherSlot`.
    case compareSlots(Int, ComparisonOperator, Int)
    /// `slot IN {values}` (`NOT IN` when negated is expressed with `.not`).
    case isIn(slot: Int, values: [ManagedValue])
    /// `slot BETWEEN {low, high}`.
    case between(slot: Int, low: ManagedValue, high: ManagedValue)
    /// A string operator (or `==`/`!=` with modifiers) against a pattern.
    case stringMatch(slot: Int, op: ComparisonOperator, pattern: String, options: ComparisonOptions)
    /// A comparison where either side computes (arithmetic).
    case compareExpressions(BoundExpression, ComparisonOperator, BoundExpression)
    /// `SELF IN {primary keys}` / `SELF == id`.
    case primaryKeyIn([Int64])
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)

    /// Evaluates the predicate over one row's values, with Core Data's in-memory semantics
    /// (`nil == nil` is true; ordering against `nil` is false).
    package func evaluate(_ values: [ManagedValue], primaryKey: Int64?) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .compare(let slot, let op, let value):
            return Self.compare(values[slot], op, value)
        case .isNull(let slot, let negated):
            return values[slot].isNull != negated
        case .compareSlots(let a, let op, let b):
            return Self.compare(values[a], op, values[b])
        case .isIn(let slot, let list):
            let value = values[slot]
            return !value.isNull && list.contains { ManagedValue.compare(value, $0) == .orderedSame }
        case .between(let slot, let low, let high):
            let value = values[slot]
            guard !value.isNull else { return false }
            return ManagedValue.compare(value, low) != .orderedAscending && ManagedValue.compare(value, high) != .orderedDescending
        case .stringMatch(let slot, let op, let pattern, let options):
            let value: String? = switch values[slot] {
            case .string(let s): s
            case .url(let u): u.absoluteString
            default: nil
            }
            return StringMatching.evaluate(op, options: options, value: value, pattern: pattern)
        case .compareExpressions(let lhs, let op, let rhs):
            return Self.compare(lhs.evaluate(values), op, rhs.evaluate(values))
        case .primaryKeyIn(let keys):
            guard let primaryKey else { return false }
            return keys.contains(primaryKey)
        case .and(let parts):
            return parts.allSatisfy { $0.evaluate(values, primaryKey: primaryKey) }
        case .or(let parts):
            return parts.contains { $0.evaluate(values, primaryKey: primaryKey) }
        case .not(let inner):
            return !inner.evaluate(values, primaryKey: primaryKey)
        }
    }

    private static func compare(_ lhs: ManagedValue, _ op: ComparisonOperator, _ rhs: ManagedValue) -> Bool {
        switch op {
        case .equal:
            return ManagedValue.compare(lhs, rhs) == .orderedSame
        case .notEqual:
            return ManagedValue.compare(lhs, rhs) != .orderedSame
        default:
            guard !lhs.isNull, !rhs.isNull else { return false }
            let order = ManagedValue.compare(lhs, rhs)
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            default: return false
            }
        }
    }
}

/// A computed operand: an attribute, a constant, or arithmetic over them. Evaluated over numbers
/// (dates count as seconds since 2001, as stored); `nil` in, or a division by zero, gives `nil`,
/// as SQL's NULL does.
package indirect enum BoundExpression: Sendable {
    case slot(Int)
    case constant(ManagedValue)
    case arithmetic(ArithmeticOperator, BoundExpression, BoundExpression)

    package func evaluate(_ values: [ManagedValue]) -> ManagedValue {
        switch self {
        case .slot(let slot): return values[slot]
        case .constant(let value): return value
        case .arithmetic(let op, let lhs, let rhs):
            guard let a = lhs.evaluate(values).numericValue, let b = rhs.evaluate(values).numericValue else { return .null }
            switch op {
            case .add: return .double(a + b)
            case .subtract: return .double(a - b)
            case .multiply: return .double(a * b)
            case .divide: return b == 0 ? .null : .double(a / b)
            }
        }
    }
}
