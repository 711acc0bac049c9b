import Foundation

/// A condition on objects, written in Apple's predicate format syntax. Core Data code spells it
/// `NSPredicate` (an alias of this class).
///
/// ```swift
/// request.predicate = NSPredicate(format: "id == %d AND text1 != nil", 100)
/// ```
///
/// Creating a predicate never traps: a malformed format is kept as an error and thrown, with its
/// position, by the `fetch` or `count` that uses it (or by ``validate()``).
// @unchecked Sendable: every stored property is an immutable `let` of a Sendable type; the class
// is not final only so that `CompoundPredicate` (in this module) can refine it, as in Core Data.
public class FetchPredicate: @unchecked Sendable, CustomStringConvertible, Equatable {
    package let parsed: Result<PredicateNode, CoreDataError>
    private let source: String
    /// The test of a predicate made with ``init(block:)``; `nil` for format predicates.
    private let block: (@Sendable (Any?, [String: Any]?) -> Bool)?

    /// Parses `format`, substituting `arguments` for `%@`, `%K`, `%d`, `%i`, `%ld`, `%lld`, `%u`,
    /// `%f`, `%lf`, `%s` in order. Mirrors `NSPredicate(format:_:)`.
    public convenience init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format` with an array of arguments. Mirrors `NSPredicate(format:argumentArray:)`.
    public init(format: String, argumentArray arguments: [Any]?) {
        source = format
        block = nil
        do throws(CoreDataError) {
            parsed = .success(try PredicateParser.parse(format, arguments: arguments ?? []))
        } catch {
            parsed = .failure(error)
        }
    }

    /// A predicate that is always true or always false. Mirrors `NSPredicate(value:)`.
    public init(value: Bool) {
        source = value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        block = nil
        parsed = .success(.constant(value))
    }

    package init(node: PredicateNode) {
        parsed = .success(node)
        source = node.description
        block = nil
    }

    package init(failure: CoreDataError, source: String) {
        parsed = .failure(failure)
        self.source = source
        block = nil
    }

    /// A predicate that runs `block` on the object (the second argument is `nil`), for testing
    /// objects in memory with ``evaluate(with:)-(Any?)``. A fetch request cannot use one (stores test
    /// predicates in SQL, as Core Data's SQLite store refuses block predicates): its fetch throws
    /// 134060. Mirrors `NSPredicate(block:)`.
    public init(block: @escaping @Sendable (Any?, [String: Any]?) -> Bool) {
        source = "BLOCKPREDICATE"
        parsed = .failure(CoreDataError(.coreData, """
            A block predicate (NSPredicate(block:)) cannot be used in a fetch request: stores test predicates \
            in SQL. Write it in format syntax, or fetch without it and filter the objects with \
            predicate.evaluate(with:).
            """))
        self.block = block
    }

    /// The predicate in format syntax, with arguments substituted; parsing it gives the same
    /// predicate. For a malformed format, the format as written.
    public var predicateFormat: String {
        switch parsed {
        case .success(let node): node.description
        case .failure: source
        }
    }

    public var description: String { predicateFormat }

    /// Throws the parse error of a malformed format.
    public func validate() throws(CoreDataError) {
        if case .failure(let error) = parsed { throw error }
    }

    /// A copy with `$NAME` variables replaced by values. Mirrors `withSubstitutionVariables(_:)`.
    public func withSubstitutionVariables(_ variables: [String: Any]) -> FetchPredicate {
        guard case .success(let node) = parsed else { return self }
        var converted: [String: PredicateValue] = [:]
        for (name, value) in variables {
            guard let predicateValue = PredicateParser.value(of: value) else { continue }
            converted[name] = predicateValue
        }
        return FetchPredicate(node: node.substituting(converted))
    }

    /// Whether `object` matches the predicate, evaluated in memory.
    public func evaluate(with object: ManagedObject) throws -> Bool {
        if let block { return block(object, nil) }
        let bound = try bind(to: object.entity)
        guard let context = object.managedObjectContext else {
            object.willAccessValue()
            return bound.evaluate(object.values, primaryKey: object.objectID.primaryKey)
        }
        return context.evaluate(bound, on: object)
    }

    /// Whether `value` matches, evaluated in memory as `NSPredicate.evaluate(with:)` evaluates
    /// the values apps filter: strings, numbers, dates, dictionaries (keys; dotted paths through
    /// nested dictionaries), arrays and sets (`@count`, `@sum`…, `ANY`/`ALL`/`NONE`, `CONTAINS`,
    /// `IN`, `SUBQUERY`), and managed objects (as the overload for managed objects does, on
    /// their context's queue). A malformed predicate, a key the value does not have or a
    /// variable without a value makes it false (Foundation raises instead).
    public func evaluate(with value: Any?) -> Bool {
        if let block { return block(value, nil) }
        if let object = value as? ManagedObject { return (try? evaluate(with: object)) ?? false }
        guard case .success(let node) = parsed else { return false }
        return ValuePredicateEvaluator().evaluate(node, on: value)
    }

    /// Whether `value` matches with `$NAME` variables replaced by `variables` (a block predicate
    /// receives them). Mirrors `evaluate(with:substitutionVariables:)`.
    public func evaluate(with value: Any?, substitutionVariables variables: [String: Any]?) -> Bool {
        if let block { return block(value, variables) }
        return withSubstitutionVariables(variables ?? [:]).evaluate(with: value)
    }

    /// Resolves the predicate against an entity, throwing parse or type errors.
    package func bind(to entity: EntityDescription) throws(CoreDataError) -> BoundPredicate {
        switch parsed {
        case .failure(let error): throw error
        case .success(let node): return try PredicateBinder(entity: entity, predicate: node).bind(node)
        }
    }

    public static func == (lhs: FetchPredicate, rhs: FetchPredicate) -> Bool {
        switch (lhs.parsed, rhs.parsed) {
        case (.success(let a), .success(let b)): a == b
        default: lhs === rhs || (lhs.block == nil && rhs.block == nil && lhs.source == rhs.source)
        }
    }
}

extension PredicateNode {
    func substituting(_ variables: [String: PredicateValue]) -> PredicateNode {
        mappingOperands { operand in
            switch operand {
            case .variable(let name): return variables[name].map { .value($0) }
            case .subqueryCount(let collection, let variable, let predicate):
                // The subquery's own variable is not substituted inside it.
                var inner = variables
                inner[variable] = nil
                return .subqueryCount(collection: collection, variable: variable, predicate: predicate.substituting(inner))
            default: return nil
            }
        }
    }

    /// The predicate with its operands replaced where `leaf` returns a replacement (arithmetic
    /// is entered; other operands are kept).
    func mappingOperands(_ leaf: (PredicateOperand) -> PredicateOperand?) -> PredicateNode {
        func operand(_ o: PredicateOperand) -> PredicateOperand {
            if let replaced = leaf(o) { return replaced }
            if case .arithmetic(let op, let lhs, let rhs) = o { return .arithmetic(op, operand(lhs), operand(rhs)) }
            return o
        }
        switch self {
        case .constant: return self
        case .comparison(let l, let op, let r, let options): return .comparison(operand(l), op, operand(r), options)
        case .and(let parts): return .and(parts.map { $0.mappingOperands(leaf) })
        case .or(let parts): return .or(parts.map { $0.mappingOperands(leaf) })
        case .not(let inner): return .not(inner.mappingOperands(leaf))
        case .quantified(let quantifier, let inner): return .quantified(quantifier, inner.mappingOperands(leaf))
        }
    }
}

/// A predicate made of others: AND, OR or NOT. Mirrors `NSCompoundPredicate`.
///
/// ```swift
/// let both = NSCompoundPredicate(andPredicateWithSubpredicates: [byAuthor, recent])
/// ```
/// A malformed subpredicate makes the compound report its error when used.
public final class CompoundPredicate: FetchPredicate, @unchecked Sendable {
    /// Mirrors `NSCompoundPredicate.LogicalType`.
    public enum LogicalType: UInt, Sendable {
        /// NOT of one subpredicate.
        case not = 0
        /// All subpredicates.
        case and = 1
        /// Any subpredicate.
        case or = 2
    }

    /// The kind of combination.
    public let compoundPredicateType: LogicalType
    /// The combined predicates.
    public let subpredicates: [FetchPredicate]

    /// Combines predicates. Mirrors `NSCompoundPredicate(type:subpredicates:)`.
    public init(type: LogicalType, subpredicates: [FetchPredicate]) {
        compoundPredicateType = type
        self.subpredicates = subpredicates
        var nodes: [PredicateNode] = []
        for predicate in subpredicates {
            switch predicate.parsed {
            case .success(let node): nodes.append(node)
            case .failure(let error):
                super.init(failure: error, source: predicate.predicateFormat)
                return
            }
        }
        let node: PredicateNode = switch type {
        case .and: nodes.isEmpty ? .constant(true) : .and(nodes)
        case .or: nodes.isEmpty ? .constant(false) : .or(nodes)
        case .not: .not(nodes.count == 1 ? nodes[0] : .and(nodes))
        }
        super.init(node: node)
    }

    /// All of the predicates. Mirrors `init(andPredicateWithSubpredicates:)`.
    public convenience init(andPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// Any of the predicates. Mirrors `init(orPredicateWithSubpredicates:)`.
    public convenience init(orPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// The negation of a predicate. Mirrors `init(notPredicateWithSubpredicate:)`.
    public convenience init(notPredicateWithSubpredicate predicate: FetchPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }
}
