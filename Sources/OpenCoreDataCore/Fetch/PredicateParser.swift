import Foundation

/// Parses Apple's predicate format syntax into a ``PredicateNode``, substituting arguments.
///
/// Grammar (the subset grows with the fetching work; new operators slot into `comparison`):
/// ```
/// predicate   := or
/// or          := and (("OR" | "||") and)*
/// and         := not (("AND" | "&&") not)*
/// not         := ("NOT" | "!") not | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
/// comparison  := operand op operand | operand "IN" operand | operand "BETWEEN" operand
/// operand     := keypath | literal | "%@" | "%K" | "%d" … | "$VAR" | "{" operand, … "}" | SELF
/// ```
///
/// Nesting — groups, `NOT`, aggregates, `SUBQUERY`, arithmetic operators — is limited to
/// ``maximumDepth`` levels, so that a crafted format (`((((…`, `NOT NOT …`, `{{{…`) is refused
/// instead of overflowing the stack here or in everything that walks the tree after; parsing is
/// linear in the length of the format.
package struct PredicateParser {
    /// How deeply a predicate may nest. Hand-written and generated predicates stay far below.
    package static let maximumDepth = 100

    private let format: String
    private let tokens: [PredicateToken]
    /// For each `(` token, the index of its matching `)` (absent when it has none).
    private let closingParenthesis: [Int: Int]
    private var position = 0
    private var depth = 0
    private var arguments: [Any]
    private var argumentIndex = 0

    package static func parse(_ format: String, arguments: [Any]) throws(CoreDataError) -> PredicateNode {
        var parser = PredicateParser(format: format, scanned: try ScannedFormats.scanned(format), arguments: arguments)
        let node = try parser.parseOr()
        guard case .end = parser.current.kind else {
            throw parser.error("unexpected \(parser.describe(parser.current)) after a complete predicate", at: parser.current)
        }
        if parser.argumentIndex < arguments.count {
            throw syntaxError(format: format, "\(arguments.count) arguments were given but the format uses only \(parser.argumentIndex)",
                              at: format.count)
        }
        return node
    }

    package static func syntaxError(format: String, _ message: String, at offset: Int) -> CoreDataError {
        CoreDataError(.coreData, "Unable to parse the predicate format \"\(format)\": \(message) (at offset \(offset)).")
    }

    private init(format: String, scanned: ScannedFormats.Scanned, arguments: [Any]) {
        self.format = format
        self.tokens = scanned.tokens
        self.closingParenthesis = scanned.closingParenthesis
        self.arguments = arguments
    }

    /// Enters one level of nesting; callers leave it with `depth -= 1`.
    private mutating func descend(at token: PredicateToken) throws(CoreDataError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("""
                the predicate nests more than \(Self.maximumDepth) levels deep (groups, NOT, aggregates, \
                SUBQUERY and arithmetic operators count); flatten it
                """, at: token)
        }
    }

    private var current: PredicateToken { tokens[position] }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private func isKeyword(_ token: PredicateToken, _ words: String...) -> Bool {
        if case .identifier(let word) = token.kind { return words.contains(word.uppercased()) }
        return false
    }

    private func isSymbol(_ token: PredicateToken, _ symbols: String...) -> Bool {
        if case .symbol(let s) = token.kind { return symbols.contains(s) }
        return false
    }

    private mutating func parseOr() throws(CoreDataError) -> PredicateNode {
        var parts = [try parseAnd()]
        while isKeyword(current, "OR") || isSymbol(current, "||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(CoreDataError) -> PredicateNode {
        var parts = [try parseNot()]
        while isKeyword(current, "AND") || isSymbol(current, "&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws(CoreDataError) -> PredicateNode {
        if isKeyword(current, "NOT") || isSymbol(current, "!") {
            try descend(at: current)
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        if isSymbol(current, "("), !startsArithmeticGroup(at: position) {
            try descend(at: current)
            defer { depth -= 1 }
            advance()
            let inner = try parseOr()
            guard isSymbol(current, ")") else { throw error("expected ')' to close the '(' of this group", at: current) }
            advance()
            return inner
        }
        for quantifier in ["ANY", "SOME", "ALL", "NONE"] where isKeyword(current, quantifier) {
            advance()
            let comparison = try parseComparison()
            return .quantified(quantifier == "SOME" ? .any : Quantifier(rawValue: quantifier) ?? .any, comparison)
        }
        if isKeyword(current, "TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword(current, "FALSEPREDICATE") { advance(); return .constant(false) }
        return try parseComparison()
    }

    /// `term (("+" | "-") term)*`
    private mutating func parseExpression() throws(CoreDataError) -> PredicateOperand {
        // Each operator nests the expression so far one level deeper (a + b + c is (a + b) + c).
        let entered = depth
        defer { depth = entered }
        var result = try parseTerm()
        while case .symbol(let s) = current.kind, s == "+" || s == "-" {
            try descend(at: current)
            advance()
            result = .arithmetic(s == "+" ? .add : .subtract, result, try parseTerm())
        }
        return result
    }

    /// `operand (("*" | "/") operand)*`, with parentheses around sub-expressions.
    private mutating func parseTerm() throws(CoreDataError) -> PredicateOperand {
        let entered = depth
        defer { depth = entered }
        var result = try parseFactor()
        while case .symbol(let s) = current.kind, s == "*" || s == "/" {
            try descend(at: current)
            advance()
            result = .arithmetic(s == "*" ? .multiply : .divide, result, try parseFactor())
        }
        return result
    }

    private mutating func parseFactor() throws(CoreDataError) -> PredicateOperand {
        // In an operand position a parenthesis always groups arithmetic (parseNot has already
        // told condition groups apart).
        if isSymbol(current, "(") {
            try descend(at: current)
            defer { depth -= 1 }
            advance()
            let inner = try parseExpression()
            guard isSymbol(current, ")") else { throw error("expected ')' to close the '(' of this expression", at: current) }
            advance()
            return inner
        }
        return try parseOperand()
    }

    /// Whether the `(` at `index` opens an arithmetic group (its matching `)` is followed by an
    /// arithmetic or comparison operator) rather than a group of conditions.
    private func startsArithmeticGroup(at index: Int) -> Bool {
        guard let close = closingParenthesis[index], close + 1 < tokens.count else { return false }
        switch tokens[close + 1].kind {
        case .symbol(let s): return ["+", "-", "*", "/", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"].contains(s)
        case .identifier(let word): return ComparisonOperator(rawValue: word.uppercased()) != nil
        default: return false
        }
    }

    private mutating func parseComparison() throws(CoreDataError) -> PredicateNode {
        let lhs = try parseExpression()
        let opToken = current
        let op: ComparisonOperator
        switch opToken.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier(let word) where ComparisonOperator(rawValue: word.uppercased()) != nil:
            op = ComparisonOperator(rawValue: word.uppercased()) ?? .equal
        default:
            throw error("""
                expected a comparison operator (==, !=, <, <=, >, >=, IN, BETWEEN, CONTAINS, BEGINSWITH, \
                ENDSWITH, LIKE, MATCHES) but found \(describe(opToken))
                """, at: opToken)
        }
        advance()
        var options = ComparisonOptions()
        if case .modifier(let letters) = current.kind {
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n", "l": break        // normalized / locale-sensitive: accepted, no effect
                default: throw error("unknown modifier '\(letter)'; use [c], [d] or [cd]", at: current)
                }
            }
            guard op.isStringOperator || op == .equal || op == .notEqual || op == .in else {
                throw error("the modifier [\(letters)] applies to string comparisons, not to \(op.rawValue)", at: current)
            }
            advance()
        }
        let rhs = try parseExpression()
        if op == .between {
            guard case .value(.list(let bounds)) = rhs, bounds.count == 2 else {
                throw error("BETWEEN needs two bounds, as in BETWEEN {1, 10}", at: opToken)
            }
        }
        return .comparison(lhs, op, rhs, options)
    }

    private mutating func parseOperand() throws(CoreDataError) -> PredicateOperand {
        let token = current
        switch token.kind {
        case .string(let s):
            advance()
            return .value(.string(s))
        case .integer(let v):
            advance()
            return .value(.integer(v))
        case .double(let v):
            advance()
            return .value(.double(v))
        case .variable(let name):
            advance()
            return .variable(name)
        case .specifier(let spec):
            advance()
            return try substitute(spec, at: token)
        case .symbol("{"):
            try descend(at: token)
            defer { depth -= 1 }
            advance()
            var items: [PredicateValue] = []
            if !isSymbol(current, "}") {
                while true {
                    let itemToken = current
                    guard case .value(let value) = try parseOperand() else {
                        throw error("an aggregate { … } may hold only constant values", at: itemToken)
                    }
                    items.append(value)
                    if isSymbol(current, ",") { advance(); continue }
                    break
                }
            }
            guard isSymbol(current, "}") else { throw error("expected '}' to close the aggregate", at: current) }
            advance()
            return .value(.list(items))
        case .identifier(let word):
            switch word.uppercased() {
            case "YES", "TRUE": advance(); return .value(.bool(true))
            case "NO", "FALSE": advance(); return .value(.bool(false))
            case "NIL", "NULL": advance(); return .value(.null)
            case "SELF": advance(); return .evaluatedObject
            case "SUBQUERY":
                return try parseSubquery()
            case "ANY", "SOME", "ALL", "NONE":
                throw error("\(word.uppercased()) goes before a comparison, as in '\(word.uppercased()) tags.name == \"x\"'", at: token)
            case "AND", "OR", "NOT", "IN", "BETWEEN", "TRUEPREDICATE", "FALSEPREDICATE", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES":
                throw error("expected a key path or a value but found the keyword \(word.uppercased())", at: token)
            default:
                advance()
                let key = word.hasPrefix("#") ? String(word.dropFirst()) : word
                guard !key.isEmpty, !key.hasPrefix("."), !key.hasSuffix("."), !key.contains("..") else {
                    throw error("'\(word)' is not a valid key path", at: token)
                }
                return .keyPath(key)
            }
        default:
            throw error("expected a key path or a value but found \(describe(token))", at: token)
        }
    }

    /// `SUBQUERY(collection, $variable, predicate).@count`.
    private mutating func parseSubquery() throws(CoreDataError) -> PredicateOperand {
        let start = current
        try descend(at: start)
        defer { depth -= 1 }
        advance()
        guard isSymbol(current, "(") else { throw error("expected '(' after SUBQUERY", at: current) }
        advance()
        guard case .identifier(let collection) = current.kind else { throw error("SUBQUERY needs a to-many key path first", at: current) }
        advance()
        guard isSymbol(current, ",") else { throw error("expected ',' after the SUBQUERY's key path", at: current) }
        advance()
        guard case .variable(let variable) = current.kind else { throw error("SUBQUERY needs a variable such as $x second", at: current) }
        advance()
        guard isSymbol(current, ",") else { throw error("expected ',' after the SUBQUERY's variable", at: current) }
        advance()
        let predicate = try parseOr()
        guard isSymbol(current, ")") else { throw error("expected ')' to close the SUBQUERY", at: current) }
        advance()
        guard case .identifier(let suffix) = current.kind, suffix == ".@count" else {
            throw error("a SUBQUERY is used through its count: SUBQUERY(…).@count", at: start)
        }
        advance()
        return .subqueryCount(collection: collection, variable: variable, predicate: predicate)
    }

    private mutating func substitute(_ spec: String, at token: PredicateToken) throws(CoreDataError) -> PredicateOperand {
        guard argumentIndex < arguments.count else {
            throw error("the format needs an argument for \(spec) but only \(arguments.count) were given", at: token)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch spec {
        case "%K":
            guard let key = argument as? String, !key.isEmpty else {
                throw error("%K needs a key name (a String), got \(type(of: argument))", at: token)
            }
            return .keyPath(key)
        case "%d", "%i", "%ld", "%lld", "%u", "%lu":
            guard case .integer(let v)? = Self.value(of: argument) else {
                throw error("\(spec) needs an integer argument, got \(type(of: argument))", at: token)
            }
            return .value(.integer(v))
        case "%f", "%lf":
            switch Self.value(of: argument) {
            case .double(let v)?: return .value(.double(v))
            case .integer(let v)?: return .value(.double(Double(v)))
            default: throw error("\(spec) needs a floating-point argument, got \(type(of: argument))", at: token)
            }
        case "%s":
            guard let s = argument as? String else { throw error("%s needs a String argument, got \(type(of: argument))", at: token) }
            return .value(.string(s))
        default:
            guard let value = Self.value(of: argument) else {
                throw error("the argument for %@ has a type a predicate cannot use: \(type(of: argument))", at: token)
            }
            return .value(value)
        }
    }

    /// Converts a format argument to a predicate value.
    package static func value(of argument: Any) -> PredicateValue? {
        // The arguments apps pass most, by their exact type first: each cast that fails below
        // costs hundreds of instructions, and an object ID came after twenty of them.
        switch ObjectIdentifier(type(of: argument)) {
        case ObjectIdentifier(String.self): if let v = argument as? String { return .string(v) }
        case ObjectIdentifier(Int.self): if let v = argument as? Int { return .integer(Int64(v)) }
        case ObjectIdentifier(ManagedObjectID.self): if let v = argument as? ManagedObjectID { return .objectID(v) }
        case ObjectIdentifier(Int64.self): if let v = argument as? Int64 { return .integer(v) }
        case ObjectIdentifier(Int32.self): if let v = argument as? Int32 { return .integer(Int64(v)) }
        case ObjectIdentifier(Double.self): if let v = argument as? Double { return .double(v) }
        case ObjectIdentifier(Date.self): if let v = argument as? Date { return .date(v) }
        case ObjectIdentifier(UUID.self): if let v = argument as? UUID { return .uuid(v) }
        default: break
        }
        if let optional = argument as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return .null }
            return value(of: wrapped)
        }
        switch argument {
        case is NSNull: return .null
        case let v as Bool: return .bool(v)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int8: return .integer(Int64(v))
        case let v as UInt: return Int64(exactly: v).map { .integer($0) }
        case let v as UInt64: return Int64(exactly: v).map { .integer($0) }
        case let v as UInt32: return .integer(Int64(v))
        case let v as UInt16: return .integer(Int64(v))
        case let v as UInt8: return .integer(Int64(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Decimal: return .decimal(v)
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as NSString: return .string(v as String)
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as UUID: return .uuid(v)
        case let v as URL: return .url(v)
        case let v as ManagedObjectID: return .objectID(v)
        case let v as ManagedObject: return .objectID(v.objectID)
        case let v as NSNumber: return .double(v.doubleValue)
        case let v as [Any]:
            var items: [PredicateValue] = []
            for item in v {
                guard let value = value(of: item) else { return nil }
                items.append(value)
            }
            return .list(items)
        case let v as any Collection:
            return value(of: Array(v) as [Any])
        default: return nil
        }
    }

    private func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let w): "'\(w)'"
        case .string(let s): "the string \"\(s)\""
        case .integer(let v): "the number \(v)"
        case .double(let v): "the number \(v)"
        case .specifier(let s): "'\(s)'"
        case .variable(let v): "'$\(v)'"
        case .symbol(let s): "'\(s)'"
        case .modifier(let m): "'[\(m)]'"
        case .end: "the end of the format"
        }
    }

    private func error(_ message: String, at token: PredicateToken) -> CoreDataError {
        Self.syntaxError(format: format, message, at: token.offset)
    }
}
