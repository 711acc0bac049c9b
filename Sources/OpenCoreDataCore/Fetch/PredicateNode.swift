import Foundation

/// A value written in a predicate: a literal or an argument.
package indirect enum PredicateValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case objectID(ManagedObjectID)
    case list([PredicateValue])
}

/// An arithmetic operator of predicate expressions.
package enum ArithmeticOperator: String, Sendable, Hashable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
}

/// One side of a comparison.
package indirect enum PredicateOperand: Sendable, Hashable {
    case keyPath(String)
    case value(PredicateValue)
    case variable(String)
    case evaluatedObject
    /// `lhs op rhs` over numbers (and dates plus or minus seconds).
    case arithmetic(ArithmeticOperator, PredicateOperand, PredicateOperand)
    /// `SUBQUERY(collection, $variable, predicate).@count`.
    case subqueryCount(collection: String, variable: String, predicate: PredicateNode)

    /// Whether the operand computes something (and so needs the expression path of the binder):
    /// arithmetic, a subquery, or a collection operator such as `tags.@count`.
    package var isComputed: Bool {
        switch self {
        case .arithmetic, .subqueryCount: true
        case .keyPath(let key): key.contains("@")
        default: false
        }
    }
}

/// `ANY`, `ALL`, `NONE` before a comparison over a to-many key path (`SOME` is `ANY`).
package enum Quantifier: String, Sendable, Hashable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// A comparison operator of the predicate language.
package enum ComparisonOperator: String, Sendable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case `in` = "IN"
    case between = "BETWEEN"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case like = "LIKE"
    case matches = "MATCHES"

    /// Whether the operator compares strings (and takes `[cd]` modifiers).
    package var isStringOperator: Bool {
        switch self {
        case .contains, .beginsWith, .endsWith, .like, .matches: true
        default: false
        }
    }

    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    package var flipped: ComparisonOperator? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .in, .between, .contains, .beginsWith, .endsWith, .like, .matches: nil
        }
    }
}

/// The `[cd]` modifiers of a string comparison.
package struct ComparisonOptions: OptionSet, Sendable, Hashable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: case-insensitive.
    package static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    package static let diacriticInsensitive = ComparisonOptions(rawValue: 2)

    /// `[c]`, `[d]`, `[cd]`, or nothing.
    package var modifierText: String {
        let letters = (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "")
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}

/// A parsed predicate, before it is resolved against an entity.
package indirect enum PredicateNode: Sendable, Hashable {
    case constant(Bool)
    case comparison(PredicateOperand, ComparisonOperator, PredicateOperand, ComparisonOptions)
    case and([PredicateNode])
    case or([PredicateNode])
    case not(PredicateNode)
    /// `ANY tags.name == "x"`: the comparison is made for the members of a to-many.
    case quantified(Quantifier, PredicateNode)
}

extension PredicateValue: CustomStringConvertible {
    package var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): v ? "YES" : "NO"
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .decimal(let v): "\(v)"
        case .string(let v):
            "\"" + v.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "%", with: "%%") + "\""
        case .date(let v): "CAST(\(v.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let v): "<\(v.map { String(format: "%02x", $0) }.joined())>"
        case .uuid(let v): "\"\(v.uuidString)\""
        case .url(let v): "\"\(v.absoluteString)\""
        case .objectID(let v): v.uriRepresentation().absoluteString
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        }
    }
}

extension PredicateOperand: CustomStringConvertible {
    package var description: String {
        switch self {
        case .keyPath(let key): key
        case .value(let value): value.description
        case .variable(let name): "$" + name
        case .evaluatedObject: "SELF"
        case .arithmetic(let op, let lhs, let rhs): "(\(lhs) \(op.rawValue) \(rhs))"
        case .subqueryCount(let collection, let variable, let predicate): "SUBQUERY(\(collection), $\(variable), \(predicate)).@count"
        }
    }
}

extension PredicateNode: CustomStringConvertible {
    /// The predicate in Apple's format syntax; parsing it gives the same predicate back.
    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let lhs, let op, let rhs, let options): "\(lhs) \(op.rawValue)\(options.modifierText) \(rhs)"
        case .and(let parts): parts.map { $0.parenthesized(inside: "AND") }.joined(separator: " AND ")
        case .or(let parts): parts.map { $0.parenthesized(inside: "OR") }.joined(separator: " OR ")
        case .not(let inner): "NOT " + inner.parenthesized(inside: "NOT")
        case .quantified(let quantifier, let inner): "\(quantifier.rawValue) " + inner.description
        }
    }

    private func parenthesized(inside parent: String) -> String {
        switch self {
        case .and where parent == "AND", .constant, .comparison, .quantified: description
        case .or where parent == "OR": description
        default: "(\(description))"
        }
    }
}
