import Foundation
import OpenCoreDataCore

/// A property mapping's value expression, as Xcode writes them (`$source.owner`,
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
/// "PersonToPerson", $source.owner)`, `YES`, `"text"`), parsed once and evaluated per object.
///
/// The mapping model is input: the parser is bounded in depth and reports what it cannot follow
/// as a ``CoreDataError`` naming the expression, never by trapping.
indirect enum MappingExpression {
    /// `$name.key.key…` (the key path may be empty).
    case variable(String, keyPath: [String])
    /// A constant: a string, a number, YES/NO, nil.
    case constant(Constant)
    /// `FUNCTION(target, "selector:", arguments…)`.
    case function(target: MappingExpression, selector: String, arguments: [MappingExpression])

    enum Constant {
        case null, bool(Bool), integer(Int64), double(Double), string(String)

        var value: Any? {
            switch self {
            case .null: nil
            case .bool(let value): value
            case .integer(let value): value
            case .double(let value): value
            case .string(let value): value
            }
        }
    }

    /// FUNCTION calls nest no deeper than this (Xcode writes one level).
    private static let maximumDepth = 16

    /// Parses `text`; `what` names the expression in errors ("Country.continent of Moody 5-Moody 6").
    init(parsing text: String, what: String) throws(CoreDataError) {
        var lexer = PredicateLexer(text)
        let tokens = try lexer.tokenize()
        var position = 0
        self = try Self.parse(tokens, &position, depth: 0, what: what)
        guard tokens[position].kind == .end else {
            throw Self.failure(what, text: text, "unexpected text after the expression")
        }
    }

    private static func parse(_ tokens: [PredicateToken], _ position: inout Int, depth: Int,
                              what: String) throws(CoreDataError) -> MappingExpression {
        guard depth < maximumDepth else { throw failure(what, text: nil, "FUNCTION calls nested more than \(maximumDepth) deep") }
        let token = tokens[position]
        position += 1
        switch token.kind {
        case .variable(let name):
            let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: \.isEmpty) else { throw failure(what, text: nil, "the key path $\(name) has an empty key") }
            return .variable(parts[0], keyPath: Array(parts.dropFirst()))
        case .string(let value):
            return .constant(.string(value))
        case .integer(let value):
            return .constant(.integer(value))
        case .double(let value):
            return .constant(.double(value))
        case .identifier(let word):
            switch word.uppercased() {
            case "YES", "TRUE": return .constant(.bool(true))
            case "NO", "FALSE": return .constant(.bool(false))
            case "NIL", "NULL": return .constant(.null)
            case "FUNCTION":
                try expect("(", tokens, &position, what: what)
                let target = try parse(tokens, &position, depth: depth + 1, what: what)
                try expect(",", tokens, &position, what: what)
                guard case .string(let selector) = tokens[position].kind else {
                    throw failure(what, text: nil, "FUNCTION needs a selector name in quotes as its second argument")
                }
                position += 1
                var arguments: [MappingExpression] = []
                while tokens[position].kind == .symbol(",") {
                    position += 1
                    arguments.append(try parse(tokens, &position, depth: depth + 1, what: what))
                }
                try expect(")", tokens, &position, what: what)
                return .function(target: target, selector: selector, arguments: arguments)
            default:
                throw failure(what, text: nil, "'\(word)' is neither a $variable key path, a constant nor FUNCTION(…)")
            }
        default:
            throw failure(what, text: nil, "expected a $variable key path, a constant or FUNCTION(…)")
        }
    }

    private static func expect(_ symbol: String, _ tokens: [PredicateToken], _ position: inout Int, what: String) throws(CoreDataError) {
        guard tokens[position].kind == .symbol(symbol) else { throw failure(what, text: nil, "expected '\(symbol)'") }
        position += 1
    }

    static func failure(_ what: String, text: String?, _ reason: String) -> CoreDataError {
        CoreDataError(.migrationMissingMappingModel, """
            The value expression \(text.map { "\($0) " } ?? "")of \(what) cannot be followed: \(reason). Use \
            $source key paths, constants, FUNCTION($manager, …) with the migration manager's functions, or \
            FUNCTION($entityPolicy, \"name\", …) answered by the policy's function(_:arguments:manager:).
            """)
    }
}

/// The objects a value holds: one object, a set, an array (of objects, or of such values, as a
/// key path through two to-manys gives) or nothing.
func managedObjects(in value: Any?) -> [ManagedObject] {
    switch value {
    case let object as ManagedObject: [object]
    case let objects as [ManagedObject]: objects
    case let objects as Set<ManagedObject>: Array(objects)
    case let values as [Any]: values.flatMap { managedObjects(in: $0) }
    default: []
    }
}
