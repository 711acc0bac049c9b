import Foundation

/// Evaluates a parsed predicate over plain values, as `NSPredicate.evaluate(with:)` does for
/// the values apps filter in memory: strings, numbers, dates, dictionaries (key paths read their
/// keys, dotted paths nested dictionaries), arrays and sets (key paths map over the members;
/// `@count`, `@sum`, `@avg`, `@min`, `@max`; `ANY`/`ALL`/`NONE`; `CONTAINS` and `IN` as
/// membership; `SUBQUERY`), and managed objects (their properties, on their context's queue).
///
/// Semantics follow the stores' in-memory evaluator: `nil == nil` is true, ordering against
/// `nil` is false, strings compare by their bytes unless `[cd]` modifiers fold them. A key that
/// a value does not have makes its comparison false (Foundation raises instead).
struct ValuePredicateEvaluator {
    func evaluate(_ node: PredicateNode, on object: Any?) -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .and(let parts):
            return parts.allSatisfy { evaluate($0, on: object) }
        case .or(let parts):
            return parts.contains { evaluate($0, on: object) }
        case .not(let inner):
            return !evaluate(inner, on: object)
        case .comparison(let lhs, let op, let rhs, let options):
            guard let left = resolve(lhs, on: object), let right = resolve(rhs, on: object) else { return false }
            return Self.compare(left, op, right, options)
        case .quantified(let quantifier, let inner):
            guard case .comparison(let lhs, let op, let rhs, let options) = inner,
                  let left = resolve(lhs, on: object), let right = resolve(rhs, on: object) else { return false }
            let members: [PredicateValue] = if case .list(let items) = left { items } else { [left] }
            let matching = { (member: PredicateValue) in Self.compare(member, op, right, options) }
            switch quantifier {
            case .any: return members.contains(where: matching)
            case .all: return members.allSatisfy(matching)
            case .none: return !members.contains(where: matching)
            }
        }
    }

    // MARK: - Operands

    /// An operand's value; `nil` when it cannot be read (an unknown key, an unset variable).
    private func resolve(_ operand: PredicateOperand, on object: Any?) -> PredicateValue? {
        switch operand {
        case .value(let value):
            return value
        case .evaluatedObject:
            return PredicateParser.value(of: object as Any)
        case .variable:
            return nil
        case .keyPath(let path):
            return value(atPath: path.split(separator: ".").map(String.init), of: object).flatMap { PredicateParser.value(of: $0 as Any) }
        case .arithmetic(let op, let lhs, let rhs):
            guard let a = resolve(lhs, on: object).flatMap(Self.number), let b = resolve(rhs, on: object).flatMap(Self.number) else { return .null }
            let result: Double = switch op {
            case .add: a + b
            case .subtract: a - b
            case .multiply: a * b
            case .divide: b == 0 ? .nan : a / b
            }
            return result.isNaN ? .null : .double(result)
        case .subqueryCount(let collection, let variable, let predicate):
            guard let members = Self.members(value(atPath: collection.split(separator: ".").map(String.init), of: object)) else { return nil }
            let test = predicate.replacingVariable(variable)
            return .integer(Int64(members.filter { evaluate(test, on: $0) }.count))
        }
    }

    /// The value at a key path: dictionary keys, managed objects' properties, collections mapped
    /// over their members, collection operators; `.some(nil)` for a missing value, `nil` for a
    /// key the value cannot have.
    private func value(atPath keys: [String], of object: Any?) -> Any?? {
        guard let key = keys.first else { return .some(object) }
        let rest = Array(keys.dropFirst())
        let unwrapped: Any? = (object as? any OptionalProtocol).map { $0.wrappedAny } ?? object
        guard let current = unwrapped, !(current is NSNull) else { return .some(nil) }
        if key.hasPrefix("@") { return aggregate(key, rest, of: current) }
        if let members = Self.members(current) {
            var values: [Any] = []
            for member in members {
                guard let found = value(atPath: keys, of: member) else { return nil }
                values.append(found ?? NSNull())
            }
            return .some(values)
        }
        let next: Any?
        switch current {
        case let dictionary as [String: Any]: next = dictionary[key]
        case let dictionary as [AnyHashable: Any]: next = dictionary[key]
        case let dictionary as NSDictionary: next = dictionary[key]
        case let object as ManagedObject:
            guard object.entity.propertiesByName[key] != nil else { return nil }
            next = object.value(forKey: key)
        default:
            return nil
        }
        return value(atPath: rest, of: next)
    }

    /// `@count`, `@sum.key`, `@avg.key`, `@min.key`, `@max.key` over a collection.
    private func aggregate(_ name: String, _ rest: [String], of object: Any) -> Any?? {
        guard let members = Self.members(object), let function = AggregateFunction(rawValue: name) else { return nil }
        if function == .count { return rest.isEmpty ? .some(members.count) : nil }
        var numbers: [Double] = []
        for member in members {
            guard let found = value(atPath: rest, of: member) else { return nil }
            if let number = found.flatMap({ PredicateParser.value(of: $0) }).flatMap(Self.number) { numbers.append(number) }
        }
        return .some(function.apply(to: numbers, count: members.count))
    }

    /// The members of an array or set (not of a string or a dictionary).
    private static func members(_ value: Any??) -> [Any]? {
        guard let value = value ?? nil, !(value is String), !(value is [String: Any]), !(value is [AnyHashable: Any]), !(value is NSDictionary) else {
            return nil
        }
        switch value {
        case let array as [Any]: return array
        case let collection as any Collection: return Array(collection) as [Any]
        default: return nil
        }
    }

    // MARK: - Comparisons

    private static func compare(_ left: PredicateValue, _ op: ComparisonOperator, _ right: PredicateValue, _ options: ComparisonOptions) -> Bool {
        switch op {
        case .in:
            switch right {
            case .list(let items): return items.contains { equal(left, $0, options) }
            case .string(let text): return string(left).map { StringMatching.evaluate(.contains, options: options, value: text, pattern: $0) } ?? false
            default: return false
            }
        case .contains:
            if case .list(let items) = left { return items.contains { equal($0, right, options) } }
            return StringMatching.evaluate(.contains, options: options, value: string(left), pattern: string(right) ?? "")
        case .between:
            guard case .list(let bounds) = right, bounds.count == 2 else { return false }
            let value = managed(left), low = managed(bounds[0]), high = managed(bounds[1])
            guard !value.isNull, !low.isNull, !high.isNull else { return false }
            return ManagedValue.compare(value, low) != .orderedAscending && ManagedValue.compare(value, high) != .orderedDescending
        case .beginsWith, .endsWith, .like, .matches:
            guard let pattern = string(right) else { return false }
            return StringMatching.evaluate(op, options: options, value: string(left), pattern: pattern)
        case .equal:
            return equal(left, right, options)
        case .notEqual:
            return !equal(left, right, options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let a = managed(left), b = managed(right)
            guard !a.isNull, !b.isNull, comparable(a, b) else { return false }
            let order = ManagedValue.compare(a, b)
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        }
    }

    private static func equal(_ left: PredicateValue, _ right: PredicateValue, _ options: ComparisonOptions) -> Bool {
        if !options.isEmpty, let a = string(left), let b = string(right) {
            return StringMatching.evaluate(.equal, options: options, value: a, pattern: b)
        }
        if case .list(let a) = left, case .list(let b) = right { return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options) } }
        return ManagedValue.compare(managed(left), managed(right)) == .orderedSame
    }

    /// Whether two values have an order between them (numbers and dates, or strings).
    private static func comparable(_ a: ManagedValue, _ b: ManagedValue) -> Bool {
        if a.numericValue != nil && b.numericValue != nil { return true }
        switch (a, b) {
        case (.string, .string), (.url, .url): return true
        default: return false
        }
    }

    private static func string(_ value: PredicateValue) -> String? {
        switch value {
        case .string(let s): s
        case .url(let u): u.absoluteString
        default: nil
        }
    }

    private static func number(_ value: PredicateValue) -> Double? {
        managed(value).numericValue
    }

    private static func managed(_ value: PredicateValue) -> ManagedValue {
        switch value {
        case .null, .list: .null
        case .bool(let v): .bool(v)
        case .integer(let v): .integer(v)
        case .double(let v): v.isNaN ? .null : .double(v)
        case .decimal(let v): .decimal(v)
        case .string(let v): .string(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .uuid(let v): .uuid(v)
        case .url(let v): .url(v)
        case .objectID(let v): .object(v)
        }
    }
}
