import Foundation

/// Translates Foundation's `Predicate` (`#Predicate<Note> { $0.id == 100 }`) into the predicate
/// language, through the key paths `@Managed` recorded for each attribute.
///
/// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, optionals and `nil`,
/// `?.` compared with `true`/`false`/`nil`, forced unwraps, `contains` on strings (CONTAINS) and on captured sequences (IN),
/// `starts(with:)` (BEGINSWITH), `+ - *` and floating-point `/`, captured values, to-one
/// relationships (`$0.folder?.title == "Work"`, `folder.title`), `contains(where:)` /
/// `allSatisfy` over a to-many (`SUBQUERY`), `??` and the ternary operator (the comparison
/// written for each case). Anything else is a ``CoreDataError`` naming the construct.
/// (`localizedStandardContains` is not available in `#Predicate` on Linux.)
package struct TypedPredicateConverter {
    package let entity: EntityDescription
    package let format: String
    /// What each predicate variable stands for (the input object, or an unwrapped optional).
    var bindings: [PredicateExpressions.VariableID: PredicateOperand] = [:]
    /// The entity of each to-many member variable (`contains(where:)`), by its name.
    var memberEntities: [String: EntityDescription] = [:]

    package static func node<T>(for predicate: Predicate<T>, entity: EntityDescription) throws(CoreDataError) -> PredicateNode {
        var converter = TypedPredicateConverter(entity: entity, format: "#Predicate<\(T.self)>")
        converter.bindings[predicate.variable.key] = .evaluatedObject
        return try converter.predicate(predicate.expression)
    }

    mutating func part(_ expression: Any) throws(CoreDataError) -> TypedPart {
        guard let convertible = expression as? any TypedPredicateConvertible else {
            throw CoreDataError(.coreData, """
                The typed predicate uses \(Self.describe(expression)), which cannot be translated to a fetch; \
                use comparisons, &&, ||, !, nil checks, contains, starts(with:) and captured values.
                """)
        }
        let part = try convertible.convert(&self)
        if case .predicate(let node) = part { return .predicate(expandingAlternatives(node)) }
        return part
    }

    mutating func predicate(_ expression: Any) throws(CoreDataError) -> PredicateNode {
        predicate(from: try part(expression))
    }

    /// A translated piece as a condition: a Bool value compared with true, an optional
    /// condition false when its optional is nil.
    mutating func predicate(from part: TypedPart) -> PredicateNode {
        switch part {
        case .predicate(let node): return node
        case .operand(.value(.bool(let value))): return .constant(value)
        case .operand(let operand): return expandingAlternatives(.comparison(operand, .equal, .value(.bool(true)), []))
        case .optionalCondition(let wrapped, let condition): return .and([.comparison(wrapped, .notEqual, .value(.null), []), condition])
        }
    }

    // MARK: - Values chosen by a condition

    /// `a ?? b` and `c ? a : b` used as values: a placeholder variable stands for the value
    /// until the comparison using it is made, which is then written for both cases:
    /// `(c AND comparison[a]) OR (NOT c AND comparison[b])`.
    private var alternatives: [String: (condition: PredicateNode, whenTrue: PredicateOperand, whenFalse: PredicateOperand)] = [:]
    private var alternativesMade = 0

    /// A placeholder for `condition ? whenTrue : whenFalse`.
    mutating func alternative(_ condition: PredicateNode, _ whenTrue: PredicateOperand, _ whenFalse: PredicateOperand) -> PredicateOperand {
        alternativesMade += 1
        let name = "\u{1}choice\(alternativesMade)"       // not a name a predicate's variable can have
        alternatives[name] = (condition, whenTrue, whenFalse)
        return .variable(name)
    }

    /// `node` with every placeholder it uses written out for both of its cases.
    private mutating func expandingAlternatives(_ node: PredicateNode) -> PredicateNode {
        var result = node
        while let (name, choice) = alternatives.first(where: { result.uses(variable: $0.key) }) {
            alternatives[name] = nil
            let chosen = { (value: PredicateOperand) in result.mappingOperands { $0 == .variable(name) ? value : nil } }
            result = .or([.and([choice.condition, chosen(choice.whenTrue)]), .and([.not(choice.condition), chosen(choice.whenFalse)])])
        }
        return result
    }

    mutating func operand(_ expression: Any) throws(CoreDataError) -> PredicateOperand {
        switch try part(expression) {
        case .operand(let operand): return operand
        case .predicate, .optionalCondition:
            throw CoreDataError(.coreData, "The typed predicate uses a condition where a value is expected (\(Self.describe(expression))).")
        }
    }

    mutating func value(_ value: Any) throws(CoreDataError) -> PredicateOperand {
        guard let converted = PredicateParser.value(of: value) else {
            throw CoreDataError(.coreData, "The typed predicate captures a value of type \(type(of: value)), which a fetch cannot use.")
        }
        return .value(converted)
    }

    /// `root.keyPath`, where root is the fetched object, a to-one key path from it
    /// (`folder.title`) or a to-many's member (`$m.name` inside a `SUBQUERY`).
    func keyPath(_ keyPath: AnyKeyPath, root: PredicateOperand) throws(CoreDataError) -> PredicateOperand {
        let owner: EntityDescription
        switch root {
        case .evaluatedObject:
            owner = entity
        case .keyPath(let path):
            owner = try self.entity(at: path, from: entity)
        case .variable(let path):
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard let member = memberEntities[parts[0]] else {
                throw CoreDataError(.coreData, "The typed predicate uses a variable it does not define.")
            }
            owner = parts.count > 1 ? try self.entity(at: parts[1], from: member) : member
        default:
            throw CoreDataError(.coreData, """
                The typed predicate reads \(keyPath) from a computed value; read key paths from the fetched \
                object or its relationships.
                """)
        }
        guard let name = owner.name(for: keyPath) else {
            throw CoreDataError(.coreData, "The typed predicate uses \(keyPath), which is not a managed property of \(owner.name).")
        }
        switch root {
        case .keyPath(let path): return .keyPath(path + "." + name)
        case .variable(let path): return .variable(path + "." + name)
        default: return .keyPath(name)
        }
    }

    /// The destination of a path of to-one relationships from `start`.
    private func entity(at path: String, from start: EntityDescription) throws(CoreDataError) -> EntityDescription {
        var current = start
        for name in path.split(separator: ".").map(String.init) {
            guard let relationship = current.relationshipsByName[name], let destination = relationship.destination else {
                throw CoreDataError(.coreData, """
                    The typed predicate reads a property of '\(path)', which is an attribute of \
                    \(current.name), not a relationship.
                    """)
            }
            guard !relationship.isToMany else {
                throw CoreDataError(.coreData, """
                    The typed predicate reads a property through the to-many relationship '\(name)' of \
                    \(current.name); test its members with contains(where:) or allSatisfy.
                    """)
            }
            current = destination
        }
        return current
    }

    /// `SUBQUERY(collection, $m, test)` for `sequence.contains(where: test)` (or, `negated`,
    /// the members that fail `test`, for `allSatisfy`): the sequence must be a to-many key path.
    mutating func subquery(_ sequence: Any, variable: PredicateExpressions.VariableID, test: Any,
                           negated: Bool) throws(CoreDataError) -> PredicateOperand {
        guard case .keyPath(let path) = try operand(sequence) else {
            throw CoreDataError(.coreData, """
                The typed predicate tests the members of something other than a to-many relationship; use \
                contains(where:) and allSatisfy on a relationship of the fetched object.
                """)
        }
        let parts = path.split(separator: ".").map(String.init)
        let owner = try entity(at: parts.dropLast().joined(separator: "."), from: entity)
        guard let relationship = owner.relationshipsByName[parts[parts.count - 1]], relationship.isToMany,
              let destination = relationship.destination else {
            throw CoreDataError(.coreData, """
                The typed predicate tests the members of '\(path)', which is not a to-many relationship of \
                \(owner.name).
                """)
        }
        let name = "m\(memberEntities.count + 1)"
        memberEntities[name] = destination
        bindings[variable] = .variable(name)
        let condition = try predicate(test)
        guard !condition.readsTheFetchedObject else {
            throw CoreDataError(.coreData, """
                The typed predicate compares the members of '\(path)' with the fetched object itself; compare \
                them with values only.
                """)
        }
        return .subqueryCount(collection: path, variable: name, predicate: negated ? .not(condition) : condition)
    }

    static func describe(_ expression: Any) -> String {
        let name = String(describing: type(of: expression))
        return name.split(separator: "<").first.map(String.init) ?? name
    }
}

/// A translated piece: a condition, or a value / key path.
enum TypedPart {
    case predicate(PredicateNode)
    case operand(PredicateOperand)
    /// `wrapped?.condition`: true, false, or nil when `wrapped` is nil.
    case optionalCondition(wrapped: PredicateOperand, condition: PredicateNode)
}

protocol TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart
}

extension PredicateExpressions.Variable: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        guard let bound = converter.bindings[key] else { throw CoreDataError(.coreData, "The typed predicate uses a variable it does not define.") }
        return .operand(bound)
    }
}

extension PredicateExpressions.KeyPath: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .operand(try converter.keyPath(keyPath, root: try converter.operand(root)))
    }
}

extension PredicateExpressions.Value: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .operand(try converter.value(value))
    }
}

extension PredicateExpressions.NilLiteral: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .operand(.value(.null))
    }
}

extension PredicateExpressions.Conjunction: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.and([try converter.predicate(lhs), try converter.predicate(rhs)]))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.or([try converter.predicate(lhs), try converter.predicate(rhs)]))
    }
}

extension PredicateExpressions.Negation: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.not(try converter.predicate(wrapped)))
    }
}

/// `a == b` / `a != b`, where either side may itself be a condition compared with a Bool.
private func equality(_ converter: inout TypedPredicateConverter, _ lhs: Any, _ rhs: Any, negated: Bool) throws(CoreDataError) -> TypedPart {
    let left = try converter.part(lhs)
    let right = try converter.part(rhs)
    switch (left, right) {
    case (.optionalCondition(let wrapped, let condition), .operand(.value(let value))), (.operand(.value(let value)), .optionalCondition(let wrapped, let condition)):
        let present = PredicateNode.comparison(wrapped, .notEqual, .value(.null), [])
        let node: PredicateNode = switch value {
        case .null: .comparison(wrapped, .equal, .value(.null), [])
        case .bool(let truth): .and([present, truth ? condition : .not(condition)])
        default: throw CoreDataError(.coreData, "The typed predicate compares an optional condition with \(value).")
        }
        return .predicate(negated ? .not(node) : node)
    case (.predicate(let condition), .operand(.value(let value))), (.operand(.value(let value)), .predicate(let condition)):
        let truth: Bool? = switch value {
        case .bool(let b): b
        case .null: false
        default: nil
        }
        guard let truth else { throw CoreDataError(.coreData, "The typed predicate compares a condition with \(value).") }
        return .predicate(truth != negated ? condition : .not(condition))
    case (.operand(let a), .operand(let b)):
        return .predicate(.comparison(a, negated ? .notEqual : .equal, b, []))
    default:
        throw CoreDataError(.coreData, "The typed predicate compares two conditions; combine them with && or || instead.")
    }
}

extension PredicateExpressions.Equal: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        try equality(&converter, lhs, rhs, negated: false)
    }
}

extension PredicateExpressions.NotEqual: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        try equality(&converter, lhs, rhs, negated: true)
    }
}

extension PredicateExpressions.Comparison: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        let operation: ComparisonOperator = switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        }
        return .predicate(.comparison(try converter.operand(lhs), operation, try converter.operand(rhs), []))
    }
}

extension PredicateExpressions.SequenceContains: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.comparison(try converter.operand(element), .in, try converter.operand(sequence), []))
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.comparison(try converter.operand(base), .contains, try converter.operand(other), []))
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .predicate(.comparison(try converter.operand(base), .beginsWith, try converter.operand(prefix), []))
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        // `$0.name?.contains("x")`: the transform sees the unwrapped value; a nil name makes the
        // comparison false, which is what the string operators do with nil.
        let wrappedOperand = try converter.operand(wrapped)
        converter.bindings[variable.key] = wrappedOperand
        switch try converter.part(transform) {
        case .predicate(let condition): return .optionalCondition(wrapped: wrappedOperand, condition: condition)
        case let other: return other
        }
    }
}

extension RelationshipDescription {
    /// The destination as the model connected it, or as its `@Managed` class describes it
    /// (the request's entity is not in a model yet when a typed predicate is translated).
    fileprivate var destination: EntityDescription? {
        destinationEntity ?? destinationType?.makeEntityDescription()
    }
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        let count = try converter.subquery(sequence, variable: variable.key, test: test, negated: false)
        return .predicate(.comparison(count, .greater, .value(.integer(0)), []))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        let count = try converter.subquery(sequence, variable: variable.key, test: test, negated: true)
        return .predicate(.comparison(count, .equal, .value(.integer(0)), []))
    }
}

extension PredicateExpressions.NilCoalesce: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        switch try converter.part(lhs) {
        case .optionalCondition(let wrapped, let condition):
            // `$0.name?.contains("x") ?? false`: the condition, or the fallback when name is nil.
            let fallback = try converter.predicate(rhs)
            return .predicate(.or([.and([.comparison(wrapped, .notEqual, .value(.null), []), condition]),
                                   .and([.comparison(wrapped, .equal, .value(.null), []), fallback])]))
        case .operand(let wrapped):
            let fallback = try converter.operand(rhs)
            return .operand(converter.alternative(.comparison(wrapped, .notEqual, .value(.null), []), wrapped, fallback))
        case .predicate:
            throw CoreDataError(.coreData, "The typed predicate applies ?? to a condition; compare the optional value instead.")
        }
    }
}

extension PredicateExpressions.Conditional: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        let condition = try converter.predicate(test)
        let whenTrue = try converter.part(trueBranch)
        let whenFalse = try converter.part(falseBranch)
        if case .operand(let a) = whenTrue, case .operand(let b) = whenFalse {
            return .operand(converter.alternative(condition, a, b))
        }
        return .predicate(.or([.and([condition, converter.predicate(from: whenTrue)]), .and([.not(condition), converter.predicate(from: whenFalse)])]))
    }
}

extension PredicateNode {
    /// Whether the predicate uses the variable `name` (in a comparison or arithmetic).
    fileprivate func uses(variable name: String) -> Bool {
        var found = false
        _ = mappingOperands { operand in
            if operand == .variable(name) { found = true }
            return nil
        }
        return found
    }

    /// Whether the predicate reads the fetched object (`SELF` or one of its key paths) rather
    /// than only variables and values.
    fileprivate var readsTheFetchedObject: Bool {
        var found = false
        _ = mappingOperands { operand in
            switch operand {
            case .evaluatedObject, .keyPath, .subqueryCount: found = true
            default: break
            }
            return nil
        }
        return found
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        try converter.part(inner)
    }
}

extension PredicateExpressions.Arithmetic: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        let operation: ArithmeticOperator = switch op {
        case .add: .add
        case .subtract: .subtract
        case .multiply: .multiply
        }
        return .operand(.arithmetic(operation, try converter.operand(lhs), try converter.operand(rhs)))
    }
}

extension PredicateExpressions.FloatDivision: TypedPredicateConvertible {
    func convert(_ converter: inout TypedPredicateConverter) throws(CoreDataError) -> TypedPart {
        .operand(.arithmetic(.divide, try converter.operand(lhs), try converter.operand(rhs)))
    }
}
