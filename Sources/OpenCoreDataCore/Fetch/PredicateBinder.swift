import Foundation

/// Resolves a parsed predicate against an entity: checks every key and every value's type and
/// produces a ``BoundPredicate``. Errors name the key and say what would fit.
package struct PredicateBinder {
    package let entity: EntityDescription
    /// The whole predicate being bound, for error messages.
    private let predicate: PredicateNode
    /// The predicate in format syntax, made only for an error message (10,000 instructions for
    /// a one-comparison predicate, which every fetch paid when it was made up front).
    package var format: String { predicate.description }

    /// A binder of `predicate` (or of a part of it, through relationships) against `entity`.
    package init(entity: EntityDescription, predicate: PredicateNode) {
        self.entity = entity
        self.predicate = predicate
    }

    package func bind(_ node: PredicateNode) throws(CoreDataError) -> BoundPredicate {
        switch node {
        case .constant(let value):
            return .constant(value)
        case .and(let parts):
            var bound: [BoundPredicate] = []
            for part in parts { bound.append(try bind(part)) }
            return .and(bound)
        case .or(let parts):
            var bound: [BoundPredicate] = []
            for part in parts { bound.append(try bind(part)) }
            return .or(bound)
        case .not(let inner):
            return .not(try bind(inner))
        case .quantified(let quantifier, let inner):
            return try bindQuantified(quantifier, inner)
        case .comparison(let lhs, let op, let rhs, let options):
            if let routed = try bindAcrossToOne(lhs, op, rhs, options) { return routed }
            if let membership = try bindMembership(lhs, op, rhs) { return membership }
            if op.isStringOperator || !options.isEmpty {
                return try bindStringComparison(lhs, op, rhs, options)
            }
            return try bindComparison(lhs, op, rhs)
        }
    }

    // MARK: - Relationships

    /// The first component of a key path and the rest (`folder.title` → `folder`, `title`).
    private static func split(_ key: String) -> (String, String)? {
        guard let dot = key.firstIndex(of: ".") else { return nil }
        return (String(key[..<dot]), String(key[key.index(after: dot)...]))
    }

    /// `folder.title == "x"`: the comparison moves to the destination of the to-one.
    private func bindAcrossToOne(_ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand,
                                 _ options: ComparisonOptions) throws(CoreDataError) -> BoundPredicate? {
        guard !lhs.isComputed && !rhs.isComputed else { return nil }
        let (key, keyOnLeft): (String, Bool)
        switch (lhs, rhs) {
        case (.keyPath(let k), .value), (.keyPath(let k), .variable): (key, keyOnLeft) = (k, true)
        case (.value, .keyPath(let k)): (key, keyOnLeft) = (k, false)
        case (.keyPath(let a), .keyPath(let b)) where a.contains(".") || b.contains("."):
            throw error("comparing '\(a)' with '\(b)' across relationships is not supported; compare each with a value")
        default: return nil
        }
        guard let (first, rest) = Self.split(key) else { return nil }
        let (slot, destination) = try toOne(first, in: key)
        let inner: PredicateNode = keyOnLeft ? .comparison(.keyPath(rest), op, rhs, options) : .comparison(lhs, op, .keyPath(rest), options)
        return .toOne(slot: slot, destination: destination, try PredicateBinder(entity: destination, predicate: predicate).bind(inner))
    }

    /// `ANY tags.name == "x"`, `ALL …`, `NONE …`, through to-one hops to one to-many.
    private func bindQuantified(_ quantifier: Quantifier, _ node: PredicateNode) throws(CoreDataError) -> BoundPredicate {
        guard case .comparison(let lhs, let op, let rhs, let options) = node, case .keyPath(let key) = lhs else {
            throw error("""
                \(quantifier.rawValue) needs a comparison with a to-many key path on its left, as in \
                '\(quantifier.rawValue) tags.name == \"x\"'
                """)
        }
        guard let (first, rest) = Self.split(key) else {
            // `ANY tags == %@`, `NONE tags IN %@`: the members compared with objects.
            if let relationship = entity.relationshipsByName[key], relationship.isToMany, case .value(let value) = rhs, options.isEmpty {
                let inner = try memberIs(relationship, op, value)
                switch quantifier {
                case .any: return inner
                case .all: return .not(.anyMember(relationship, .not(try memberIs(relationship, op, value, asMember: true))))
                case .none: return .not(inner)
                }
            }
            throw error("""
                \(quantifier.rawValue) \(key) needs a key path through a to-many relationship, as in \
                'tags.name', or a to-many compared with objects, as in 'ANY tags == %@'
                """)
        }
        let relationship = try relationshipNamed(first, in: key)
        if !relationship.isToMany {
            let (slot, destination) = try toOne(first, in: key)
            let inner = try PredicateBinder(entity: destination, predicate: predicate).bindQuantified(quantifier, .comparison(.keyPath(rest), op, rhs, options))
            return .toOne(slot: slot, destination: destination, inner)
        }
        guard let destination = relationship.destinationEntity else { throw error("the relationship '\(first)' has no destination") }
        let inner = try PredicateBinder(entity: destination, predicate: predicate).bind(.comparison(.keyPath(rest), op, rhs, options))
        switch quantifier {
        case .any: return .anyMember(relationship, inner)
        case .all: return .not(.anyMember(relationship, .not(inner)))
        case .none: return .not(.anyMember(relationship, inner))
        }
    }

    /// `tags CONTAINS %@`, `%@ IN tags`: some member of the to-many is the object.
    private func bindMembership(_ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand) throws(CoreDataError) -> BoundPredicate? {
        let (key, value): (String, PredicateValue)
        switch (lhs, op, rhs) {
        case (.keyPath(let k), .contains, .value(let v)), (.value(let v), .in, .keyPath(let k)): (key, value) = (k, v)
        default: return nil
        }
        guard let relationship = entity.relationshipsByName[key], relationship.isToMany else { return nil }
        return try memberIs(relationship, .equal, value)
    }

    /// Some member of `relationship` is (`==`), is not (`!=`) or is among (`IN`) the objects in
    /// `value` — or, with `asMember`, the predicate on one member alone (for `ALL`).
    private func memberIs(_ relationship: RelationshipDescription, _ op: ComparisonOperator, _ value: PredicateValue,
                          asMember: Bool = false) throws(CoreDataError) -> BoundPredicate {
        guard let destination = relationship.destinationEntity else { throw error("the relationship '\(relationship.name)' has no destination") }
        func objects(_ items: [PredicateValue]) throws(CoreDataError) -> [ManagedObjectID] {
            var ids: [ManagedObjectID] = []
            for item in items {
                switch item {
                case .objectID(let id): if id.entity.rootEntity.name == destination.rootEntity.name { ids.append(id) }
                case .null: continue
                default:
                    throw CoreDataError(.coreData, """
                        The predicate \"\(format)\" compares the members of the to-many relationship \
                        '\(relationship.name)' with \(item); compare them with managed objects or object IDs, \
                        or compare one of their attributes, as in 'ANY \(relationship.name).name == \"x\"'.
                        """, key: relationship.name)
                }
            }
            return ids
        }
        let member: BoundPredicate
        switch (op, value) {
        case (.equal, _): member = .isObject(try objects([value]))
        case (.notEqual, _): member = .not(.isObject(try objects([value])))
        case (.in, .list(let items)): member = .isObject(try objects(items))
        default:
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses \(op.rawValue) with the members of '\(relationship.name)'; \
                compare them with objects using ==, != or IN (or CONTAINS / IN without ANY).
                """, key: relationship.name)
        }
        return asMember ? member : .anyMember(relationship, member)
    }

    /// `tags.@count`, `memos.@sum.size`, `folder.memos.@avg.size`, `folder.size`: an expression.
    private func pathExpression(_ key: String) throws(CoreDataError) -> BoundExpression {
        guard let (first, rest) = Self.split(key) else {
            throw error("'\(key)' is not a collection operator; use @count, @sum, @avg, @min or @max after a to-many key path")
        }
        let relationship = try relationshipNamed(first, in: key)
        guard let destination = relationship.destinationEntity else { throw error("the relationship '\(first)' has no destination") }
        if !relationship.isToMany {
            let (slot, _) = try toOne(first, in: key)
            return .toOne(slot: slot, destination: destination, try PredicateBinder(entity: destination, predicate: predicate).expression(.keyPath(rest)))
        }
        let (operatorName, valuePath) = Self.split(rest) ?? (rest, "")
        guard let function = AggregateFunction(rawValue: operatorName) else {
            throw error("'\(key)' goes through the to-many '\(first)'; use ANY/ALL/NONE, or a collection operator (@count, @sum, @avg, @min, @max)")
        }
        if function == .count {
            guard valuePath.isEmpty else { throw error("@count takes no key after it ('\(key)')") }
            return .aggregate(.count, relationship, value: nil, filter: nil)
        }
        guard !valuePath.isEmpty else { throw error("\(operatorName) needs a key after it, as in '\(first).\(operatorName).price'") }
        let value = try PredicateBinder(entity: destination, predicate: predicate).expression(.keyPath(valuePath))
        return .aggregate(function, relationship, value: value, filter: nil)
    }

    /// `SUBQUERY(tags, $t, $t.name BEGINSWITH "s").@count`.
    private func subqueryCount(_ collection: String, _ variable: String, _ predicate: PredicateNode) throws(CoreDataError) -> BoundExpression {
        if let (first, rest) = Self.split(collection) {
            let (slot, destination) = try toOne(first, in: collection)
            return .toOne(slot: slot, destination: destination,
                          try PredicateBinder(entity: destination, predicate: self.predicate).subqueryCount(rest, variable, predicate))
        }
        let relationship = try relationshipNamed(collection, in: collection)
        guard relationship.isToMany, let destination = relationship.destinationEntity else {
            throw error("SUBQUERY needs a to-many relationship, and '\(collection)' is not one")
        }
        let filter = try PredicateBinder(entity: destination, predicate: self.predicate).bind(predicate.replacingVariable(variable))
        return .aggregate(.count, relationship, value: nil, filter: filter)
    }

    private func relationshipNamed(_ name: String, in key: String) throws(CoreDataError) -> RelationshipDescription {
        guard let relationship = entity.relationshipsByName[name] else {
            let known = entity.relationshipsByName.keys.sorted().joined(separator: ", ")
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses the key path '\(key)', but '\(name)' is not a relationship of \
                \(entity.name)\(known.isEmpty ? "" : "; its relationships are: \(known)").
                """, key: key)
        }
        return relationship
    }

    private func toOne(_ name: String, in key: String) throws(CoreDataError) -> (Int, EntityDescription) {
        _ = try relationshipNamed(name, in: key)
        guard case .toOne(let slot, let destination) = entity.keyPathStep(name) else {
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses the key path '\(key)' through the to-many relationship \
                '\(name)'; put ANY, ALL or NONE before the comparison, or use a collection operator such as \
                '\(name).@count'.
                """, key: key)
        }
        return (slot, destination)
    }

    /// `folder == %@`, `folder == nil`, `folder IN %@`: a to-one compared with objects or IDs.
    private func bindToOneKey(_ key: String, slot: Int, _ op: ComparisonOperator, _ value: PredicateValue) throws(CoreDataError) -> BoundPredicate {
        func object(_ v: PredicateValue) throws(CoreDataError) -> ManagedValue {
            switch v {
            case .null: return .null
            case .objectID(let id): return .object(id)
            default: throw CoreDataError(.coreData, """
                The predicate \"\(format)\" compares the relationship '\(key)' with \(v); compare it with a \
                managed object, an object ID or nil.
                """, key: key)
            }
        }
        switch (op, value) {
        case (.equal, _), (.notEqual, _):
            let stored = try object(value)
            return stored.isNull ? .isNull(slot: slot, negated: op == .notEqual) : .compare(slot: slot, op: op, value: stored)
        case (.in, .list(let items)):
            var values: [ManagedValue] = []
            for item in items { values.append(try object(item)) }
            return .isIn(slot: slot, values: values)
        default:
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses \(op.rawValue) with the relationship '\(key)'; relationships \
                support ==, != and IN.
                """, key: key)
        }
    }

    private func bindComparison(_ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand) throws(CoreDataError) -> BoundPredicate {
        if lhs.isComputed || rhs.isComputed {
            guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) else {
                throw error("\(op.rawValue) cannot compare computed values; use ==, !=, <, <=, > or >=")
            }
            return .compareExpressions(try expression(lhs), op, try expression(rhs))
        }
        switch (lhs, rhs) {
        case (.keyPath(let key), .value(let value)):
            return try bindKey(key, op, value)
        case (.value(let value), .keyPath(let key)):
            guard let flipped = op.flipped else {
                throw error("\(op.rawValue) needs the key path on its left, as in 'key \(op.rawValue) …'")
            }
            return try bindKey(key, flipped, value)
        case (.keyPath(let a), .keyPath(let b)):
            guard op != .in && op != .between && !op.isStringOperator else { throw error("\(op.rawValue) needs a list of values on its right") }
            let (slotA, attrA) = try attribute(a)
            let (slotB, attrB) = try attribute(b)
            guard Self.comparable(attrA.attributeType, attrB.attributeType) else {
                throw error("'\(a)' (\(attrA.attributeType)) and '\(b)' (\(attrB.attributeType)) cannot be compared")
            }
            return .compareSlots(slotA, op, slotB)
        case (.evaluatedObject, .value(let value)), (.value(let value), .evaluatedObject):
            return try bindSelf(op, value)
        case (.value(let a), .value(let b)):
            let order = Self.constantOrder(a, b)
            switch op {
            case .equal: return .constant(order == .orderedSame)
            case .notEqual: return .constant(order != .orderedSame)
            default: throw error("comparing two constants with \(op.rawValue) is not supported; compare a key path with a value")
            }
        case (.variable(let name), _), (_, .variable(let name)):
            throw error("the variable $\(name) has no value; call withSubstitutionVariables(_:) first")
        default:
            throw error("the comparison \(lhs) \(op.rawValue) \(rhs) is not supported; compare a key path with a value or another key path")
        }
    }

    private func bindStringComparison(_ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand,
                                      _ options: ComparisonOptions) throws(CoreDataError) -> BoundPredicate {
        guard case .keyPath(let key) = lhs else {
            throw error("\(op.rawValue) needs a key path on its left, as in 'name \(op.rawValue) \"x\"'")
        }
        let (slot, attribute) = try attribute(key)
        guard attribute.attributeType == .string || attribute.attributeType == .uri else {
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses \(op.rawValue)\(options.modifierText) on '\(key)', which is \
                of type \(attribute.attributeType); string operators and [cd] modifiers apply to String \
                attributes.
                """, key: key)
        }
        if op == .in {
            guard case .value(.list(let items)) = rhs else { throw error("IN needs a list on its right") }
            var parts: [BoundPredicate] = []
            for item in items {
                guard case .string(let s) = item else { throw error("IN[\(options.modifierText)] on '\(key)' needs strings") }
                parts.append(.stringMatch(slot: slot, op: .equal, pattern: s, options: options))
            }
            return .or(parts)
        }
        switch rhs {
        case .value(.string(let pattern)):
            if op == .matches, !StringMatching.isValidRegex(pattern) {
                throw CoreDataError(.coreData, """
                    The predicate \"\(format)\" uses MATCHES with \"\(pattern)\", which is not a valid regular \
                    expression.
                    """, key: key)
            }
            return .stringMatch(slot: slot, op: op, pattern: pattern, options: options)
        case .value(.null):
            if op == .equal { return .isNull(slot: slot, negated: false) }
            if op == .notEqual { return .isNull(slot: slot, negated: true) }
            return .constant(false)
        case .value(let other):
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" compares '\(key)' with \(other) using \(op.rawValue); it needs a \
                string.
                """, key: key)
        default:
            throw error("\(op.rawValue) compares a key path with a string value")
        }
    }

    /// A computed operand over numeric (or date) attributes and constants.
    private func expression(_ operand: PredicateOperand) throws(CoreDataError) -> BoundExpression {
        switch operand {
        case .keyPath(let key) where key.contains("."):
            return try pathExpression(key)
        case .subqueryCount(let collection, let variable, let predicate):
            return try subqueryCount(collection, variable, predicate)
        case .keyPath(let key):
            let (slot, attribute) = try attribute(key)
            guard attribute.attributeType.isNumeric || attribute.attributeType == .date else {
                throw CoreDataError(.coreData, """
                    The predicate \"\(format)\" computes with '\(key)', which is of type \
                    \(attribute.attributeType); arithmetic applies to numbers and dates.
                    """, key: key)
            }
            return .slot(slot)
        case .value(let value):
            switch value {
            case .integer(let v): return .constant(.integer(v))
            case .double(let v): return .constant(v.isNaN ? .null : .double(v))
            case .bool(let v): return .constant(.integer(v ? 1 : 0))
            case .decimal(let v): return .constant(v.isNaN ? .null : .double(NSDecimalNumber(decimal: v).doubleValue))
            case .date(let v): return .constant(v.timeIntervalSinceReferenceDate.isNaN ? .null : .date(v))
            case .null: return .constant(.null)
            default: throw error("arithmetic needs numbers, not \(value)")
            }
        case .arithmetic(let op, let lhs, let rhs):
            return .arithmetic(op, try expression(lhs), try expression(rhs))
        case .variable(let name):
            throw error("the variable $\(name) has no value; call withSubstitutionVariables(_:) first")
        case .evaluatedObject:
            throw error("SELF cannot take part in arithmetic")
        }
    }

    private func bindKey(_ key: String, _ op: ComparisonOperator, _ value: PredicateValue) throws(CoreDataError) -> BoundPredicate {
        if let slot = entity.toOneSlotByName[key] { return try bindToOneKey(key, slot: slot, op, value) }
        let (slot, attribute) = try attribute(key)
        switch op {
        case .in:
            guard case .list(let items) = value else {
                throw error("IN needs a list on its right, as in '\(key) IN {1, 2}' or '\(key) IN %@' with an array")
            }
            var converted: [ManagedValue] = []
            for item in items { converted.append(try convert(item, for: attribute)) }
            return .isIn(slot: slot, values: converted)
        case .between:
            guard case .list(let bounds) = value, bounds.count == 2 else {
                throw error("BETWEEN needs two bounds, as in '\(key) BETWEEN {1, 10}'")
            }
            return .between(slot: slot, low: try convert(bounds[0], for: attribute), high: try convert(bounds[1], for: attribute))
        case .equal, .notEqual:
            let stored = try convert(value, for: attribute)
            if stored.isNull { return .isNull(slot: slot, negated: op == .notEqual) }
            return .compare(slot: slot, op: op, value: stored)
        default:
            let stored = try convert(value, for: attribute)
            if stored.isNull { return .constant(false) }
            if !(attribute.attributeType.isNumeric || attribute.attributeType == .date || attribute.attributeType == .string || attribute.attributeType == .uri) {
                throw error("'\(key)' is of type \(attribute.attributeType), which has no order; use == or != with it")
            }
            return .compare(slot: slot, op: op, value: stored)
        }
    }

    private func bindSelf(_ op: ComparisonOperator, _ value: PredicateValue) throws(CoreDataError) -> BoundPredicate {
        func object(_ v: PredicateValue) throws(CoreDataError) -> ManagedObjectID? {
            guard case .objectID(let id) = v else { throw error("SELF can only be compared with managed objects or object IDs") }
            return id.entity.rootEntity.name == entity.rootEntity.name ? id : nil
        }
        switch (op, value) {
        case (.equal, _), (.notEqual, _):
            let ids = try object(value).map { [$0] } ?? []
            return op == .equal ? .isObject(ids) : .not(.isObject(ids))
        case (.in, .list(let items)):
            var ids: [ManagedObjectID] = []
            for item in items { if let id = try object(item) { ids.append(id) } }
            return .isObject(ids)
        default:
            throw error("SELF supports only ==, != and IN with objects or object IDs")
        }
    }

    private func attribute(_ key: String) throws(CoreDataError) -> (Int, AttributeDescription) {
        if key.contains(".") {
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses the key path '\(key)' where only an attribute of \
                \(entity.name) fits; compare the key path with a value instead.
                """, key: key)
        }
        guard let slot = entity.slotByName[key] else {
            let known = entity.storedAttributes.map(\.name).joined(separator: ", ")
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" uses the key '\(key)', which the entity \(entity.name) does not \
                have. Its attributes are: \(known).
                """, key: key)
        }
        return (slot, entity.storedAttributes[slot])
    }

    /// Converts a predicate value to the stored form of `attribute`, or throws a type-mismatch error.
    private func convert(_ value: PredicateValue, for attribute: AttributeDescription) throws(CoreDataError) -> ManagedValue {
        let type = attribute.attributeType
        let converted: ManagedValue? = switch (value, type) {
        case (.null, _): .null
        case (.integer(let v), .integer16), (.integer(let v), .integer32), (.integer(let v), .integer64): .integer(v)
        case (.bool(let v), .integer16), (.bool(let v), .integer32), (.bool(let v), .integer64): .integer(v ? 1 : 0)
        case (.double(let v), .integer16), (.double(let v), .integer32), (.double(let v), .integer64):
            Int64(exactly: v).map { .integer($0) } ?? .double(v)
        case (.decimal(let v), .integer16), (.decimal(let v), .integer32), (.decimal(let v), .integer64):
            .double(NSDecimalNumber(decimal: v).doubleValue)
        case (.bool(let v), .boolean): .bool(v)
        case (.integer(let v), .boolean): .integer(v)
        case (.double(let v), .boolean): .double(v)
        case (.integer(let v), .double), (.integer(let v), .float): .double(Double(v))
        case (.double(let v), .double), (.double(let v), .float): .double(v)
        case (.decimal(let v), .double), (.decimal(let v), .float): .double(NSDecimalNumber(decimal: v).doubleValue)
        case (.bool(let v), .double), (.bool(let v), .float): .double(v ? 1 : 0)
        case (.integer(let v), .decimal): .decimal(Decimal(v))
        case (.double(let v), .decimal): .decimal(Decimal(v))
        case (.decimal(let v), .decimal): .decimal(v)
        case (.string(let v), .string): .string(v)
        case (.date(let v), .date): .date(v)
        case (.data(let v), .binaryData): .data(v)
        case (.uuid(let v), .uuid): .uuid(v)
        case (.string(let v), .uuid): UUID(uuidString: v).map { .uuid($0) }
        case (.url(let v), .uri): .url(v)
        case (.string(let v), .uri): URL(string: v).map { .url($0) }
        default: nil
        }
        guard let converted else {
            throw CoreDataError(.coreData, """
                The predicate \"\(format)\" compares '\(attribute.name)', of type \(type), with \(value), \
                which is not a \(type) value. Pass a value of the attribute's type.
                """, key: attribute.name)
        }
        // NaN is no stored value (SQLite binds it as NULL): it compares as nil in every store.
        return converted.isNaN ? .null : converted
    }

    private static func comparable(_ a: AttributeType, _ b: AttributeType) -> Bool {
        if a.isNumeric && b.isNumeric { return true }
        if (a == .string || a == .uri) && (b == .string || b == .uri) { return true }
        return a == b
    }

    private static func constantOrder(_ a: PredicateValue, _ b: PredicateValue) -> ComparisonResult {
        a == b ? .orderedSame : .orderedAscending
    }

    private func error(_ message: String) -> CoreDataError {
        CoreDataError(.coreData, "The predicate \"\(format)\" cannot be used with \(entity.name): \(message).")
    }
}

extension PredicateNode {
    /// The predicate of a SUBQUERY with its variable turned into the member itself:
    /// `$t.name` → `name`, `$t` → `SELF`.
    func replacingVariable(_ variable: String) -> PredicateNode {
        mappingOperands { operand in
            switch operand {
            case .variable(let name) where name == variable: .evaluatedObject
            case .variable(let name) where name.hasPrefix(variable + "."): .keyPath(String(name.dropFirst(variable.count + 1)))
            default: nil
            }
        }
    }
}
