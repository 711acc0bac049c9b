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
    /// A primary key within a range: a batch of dense keys read as one range scan (the reader
    /// keeps the rows it asked for).
    case primaryKeyRange(ClosedRange<Int64>)
    /// `SELF == object`, `SELF IN objects`, and a to-many's members compared with objects: the
    /// subject is one of these objects, saved or not (a store's rows can match only saved ones).
    case isObject([ManagedObjectID])
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    /// The predicate (bound to `destination`) holds for the destination of the to-one in `slot`;
    /// without a destination it is evaluated over nil values (so `folder.title == nil` holds).
    case toOne(slot: Int, destination: EntityDescription, BoundPredicate)
    /// Some member of a to-many satisfies the predicate (bound to the destination). `ALL` and
    /// `NONE` are made of it with `not`.
    case anyMember(RelationshipDescription, BoundPredicate)

    /// Evaluates the predicate over one row's values, with Core Data's in-memory semantics
    /// (`nil == nil` is true; ordering against `nil` is false). Relationships need `subject`'s
    /// graph; without one they match nothing.
    package func evaluate(_ values: [ManagedValue], primaryKey: Int64?) -> Bool {
        evaluate(EvaluationSubject(values: values, primaryKey: primaryKey))
    }

    package func evaluate(_ subject: EvaluationSubject) -> Bool {
        let values = subject.values
        let primaryKey = subject.primaryKey
        switch self {
        case .constant(let value):
            return value
        case .compare(let slot, let op, let value):
            return Self.compare(values[slot], op, value)
        case .isNull(let slot, let negated):
            return (values[slot].isNull || values[slot].isNaN) != negated
        case .compareSlots(let a, let op, let b):
            return Self.compare(values[a], op, values[b])
        case .isIn(let slot, let list):
            let value = values[slot]
            return !value.isNull && list.contains { ManagedValue.compare(value, $0) == .orderedSame }
        case .between(let slot, let low, let high):
            let value = values[slot]
            // SQL: `x BETWEEN NULL AND 5` is NULL, so a missing bound matches nothing.
            guard !value.isNull, !low.isNull, !high.isNull else { return false }
            return ManagedValue.compare(value, low) != .orderedAscending && ManagedValue.compare(value, high) != .orderedDescending
        case .stringMatch(let slot, let op, let pattern, let options):
            let value: String? = switch values[slot] {
            case .string(let s): s
            case .url(let u): u.absoluteString
            default: nil
            }
            return StringMatching.evaluate(op, options: options, value: value, pattern: pattern)
        case .compareExpressions(let lhs, let op, let rhs):
            return Self.compare(lhs.evaluate(subject), op, rhs.evaluate(subject))
        case .primaryKeyIn(let keys):
            guard let primaryKey else { return false }
            return keys.contains(primaryKey)
        case .primaryKeyRange(let range):
            guard let primaryKey else { return false }
            return range.contains(primaryKey)
        case .isObject(let ids):
            if let id = subject.id { return ids.contains(id) }
            guard let primaryKey else { return false }
            return ids.contains { $0.primaryKey == primaryKey }
        case .and(let parts):
            return parts.allSatisfy { $0.evaluate(subject) }
        case .or(let parts):
            return parts.contains { $0.evaluate(subject) }
        case .not(let inner):
            return !inner.evaluate(subject)
        case .toOne(let slot, let destination, let inner):
            return inner.evaluate(subject.destination(slot: slot, as: destination))
        case .anyMember(let relationship, let inner):
            return subject.members(relationship).contains { inner.evaluate($0) }
        }
    }

    private static func compare(_ lhs: ManagedValue, _ op: ComparisonOperator, _ rhs: ManagedValue) -> Bool {
        // An unsaved NaN (which a save refuses) compares as nil, as SQLite would store it.
        let lhs = lhs.isNaN ? .null : lhs, rhs = rhs.isNaN ? .null : rhs
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
/// (dates count as seconds since 2001, as stored); `nil` in, a division by zero, or a NaN result
/// (`∞ − ∞`) gives `nil`, as SQL's NULL does.
package indirect enum BoundExpression: Sendable {
    case slot(Int)
    case constant(ManagedValue)
    case arithmetic(ArithmeticOperator, BoundExpression, BoundExpression)
    /// A value of the destination of a to-one (nil without one).
    case toOne(slot: Int, destination: EntityDescription, BoundExpression)
    /// `@count` (value nil), `@sum`, `@avg`, `@min`, `@max` over the members of a to-many,
    /// optionally only those matching `filter` (SUBQUERY).
    case aggregate(AggregateFunction, RelationshipDescription, value: BoundExpression?, filter: BoundPredicate?)

    package func evaluate(_ values: [ManagedValue]) -> ManagedValue {
        evaluate(EvaluationSubject(values: values, primaryKey: nil))
    }

    package func evaluate(_ subject: EvaluationSubject) -> ManagedValue {
        let values = subject.values
        switch self {
        case .slot(let slot): return values[slot]
        case .constant(let value): return value
        case .toOne(let slot, let destination, let inner):
            return inner.evaluate(subject.destination(slot: slot, as: destination))
        case .aggregate(let function, let relationship, let value, let filter):
            var members = subject.members(relationship)
            if let filter { members = members.filter { filter.evaluate($0) } }
            if function == .count { return .integer(Int64(members.count)) }
            return Self.number(function.apply(to: members.compactMap { value?.evaluate($0).numericValue }, count: members.count))
        case .arithmetic(let op, let lhs, let rhs):
            guard let a = lhs.evaluate(subject).numericValue, let b = rhs.evaluate(subject).numericValue else { return .null }
            switch op {
            case .add: return Self.number(a + b)
            case .subtract: return Self.number(a - b)
            case .multiply: return Self.number(a * b)
            case .divide: return b == 0 ? .null : Self.number(a / b)
            }
        }
    }
}

extension BoundExpression {
    /// A computed number as a value: NaN (and no number) is nil, as SQLite makes it NULL.
    private static func number(_ value: Double?) -> ManagedValue {
        guard let value, !value.isNaN else { return .null }
        return .double(value)
    }
}

/// A collection operator over a to-many key path.
package enum AggregateFunction: String, Sendable, Hashable {
    case count = "@count"
    case sum = "@sum"
    case average = "@avg"
    case minimum = "@min"
    case maximum = "@max"

    /// The operator over the numbers of `count` members (members without a number left out):
    /// nil for the average, minimum or maximum of none.
    package func apply(to numbers: [Double], count: Int) -> Double? {
        switch self {
        case .count: Double(count)
        case .sum: numbers.reduce(0, +)
        case .average: numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
        case .minimum: numbers.min()
        case .maximum: numbers.max()
        }
    }
}

/// Gives in-memory evaluation the object graph: the values of other objects and the members of
/// to-many relationships (the store's rows, or a context's current objects).
package protocol GraphResolver {
    /// The current values of an object, in its own entity's slot order; `nil` when it is gone.
    func values(of id: ManagedObjectID) -> [ManagedValue]?
    /// The members of a to-many relationship of an object.
    func members(_ relationship: RelationshipDescription, of id: ManagedObjectID) -> [ManagedObjectID]
}

/// What a predicate is evaluated over: a row's values, its key and identity, and the graph.
package struct EvaluationSubject {
    package var values: [ManagedValue]
    package var primaryKey: Int64?
    package var id: ManagedObjectID?
    package var graph: (any GraphResolver)?

    package init(values: [ManagedValue], primaryKey: Int64?, id: ManagedObjectID? = nil, graph: (any GraphResolver)? = nil) {
        self.values = values
        self.primaryKey = primaryKey
        self.id = id
        self.graph = graph
    }

    /// The subject for the destination of a to-one (nil values when there is none).
    func destination(slot: Int, as entity: EntityDescription) -> EvaluationSubject {
        if case .object(let id) = values[slot], let graph, let found = graph.values(of: id) {
            return EvaluationSubject(values: entity.adapt(found, from: id.entity), primaryKey: id.primaryKey, id: id, graph: graph)
        }
        return EvaluationSubject(values: Array(repeating: .null, count: entity.valueSlotCount), primaryKey: nil, graph: graph)
    }

    /// The subjects for the members of a to-many.
    func members(_ relationship: RelationshipDescription) -> [EvaluationSubject] {
        guard let id, let graph, let destination = relationship.destinationEntity else { return [] }
        return graph.members(relationship, of: id).compactMap { member in
            graph.values(of: member).map { EvaluationSubject(values: destination.adapt($0, from: member.entity), primaryKey: member.primaryKey,
                                                             id: member, graph: graph) }
        }
    }
}

extension EntityDescription {
    /// Values of an object of `other` (this entity or a sub-entity) in this entity's slot order.
    package func adapt(_ values: [ManagedValue], from other: EntityDescription) -> [ManagedValue] {
        guard other !== self, other.toOneRelationships.count > 0 || values.count != valueSlotCount else { return values }
        var result = Array(values.prefix(storedAttributes.count))
        for relationship in toOneRelationships {
            result.append(other.toOneSlotByName[relationship.name].map { $0 < values.count ? values[$0] : .null } ?? .null)
        }
        return result
    }
}

extension BoundPredicate {
    /// Whether the predicate reads other objects (a to-one's destination, a to-many's members):
    /// then a change to one object can change whether another matches.
    package var followsRelationships: Bool {
        switch self {
        case .constant, .compare, .isNull, .compareSlots, .isIn, .between, .stringMatch, .primaryKeyIn, .primaryKeyRange, .isObject: false
        case .compareExpressions(let lhs, _, let rhs): lhs.followsRelationships || rhs.followsRelationships
        case .and(let parts), .or(let parts): parts.contains { $0.followsRelationships }
        case .not(let inner): inner.followsRelationships
        case .toOne, .anyMember: true
        }
    }
}

extension BoundExpression {
    /// Whether the expression reads other objects.
    package var followsRelationships: Bool {
        switch self {
        case .slot, .constant: false
        case .arithmetic(_, let lhs, let rhs): lhs.followsRelationships || rhs.followsRelationships
        case .toOne, .aggregate: true
        }
    }
}
