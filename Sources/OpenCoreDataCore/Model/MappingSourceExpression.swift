/// What an entity mapping's source expression (`NSEntityMapping.sourceExpression`) selects: the
/// fetch Xcode writes for every entity mapping, narrowed by the mapping's filter predicate,
///
///     FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "archived == NO"),
///           $manager.sourceContext, NO)
///
/// (also with `…predicateString:includesSubentities:` and a third argument, single quotes, or
/// `FUNCTION($manager, "sourceContext")` for the context). Other expressions are app code that
/// only Objective-C could evaluate: reading one throws, naming the mapping.
package struct MappingSourceExpression: Equatable, Sendable {
    /// The source entity the fetch names.
    package var entityName: String
    /// The filter predicate, in predicate format (`TRUEPREDICATE` when there is none).
    package var predicateFormat: String
    /// Whether objects of the entity's sub-entities are selected too.
    package var includesSubentities: Bool

    /// Whether the expression selects every object of its entity and no other (what a mapping
    /// without a source expression does).
    package var selectsAll: Bool { predicateFormat == "TRUEPREDICATE" && !includesSubentities }

    /// Reads `text`, the source expression of the entity mapping `mapping`.
    package init(_ text: String, mapping: String) throws(CoreDataError) {
        guard let parsed = Self.parse(text) else {
            throw CoreDataError(.migration, """
                The entity mapping \(mapping) selects its source objects with \(text): only Xcode's form \
                FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "<entity>", \
                "<predicate>"), $manager.sourceContext, NO) can be followed. Write the filter as that \
                predicate string, or select the objects in an EntityMigrationPolicy.
                """)
        }
        self = parsed
    }

    /// Xcode's source expression for `entity` narrowed by the predicate `filter` (format text).
    package static func fetch(_ entity: String, filter: String) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \(quoted(entity)), \(quoted(filter))), "
            + "$manager.sourceContext, NO)"
    }

    private init(entityName: String, predicateFormat: String, includesSubentities: Bool) {
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.includesSubentities = includesSubentities
    }

    private static func parse(_ text: String) -> MappingSourceExpression? {
        var tokens = Token.scan(text)[...]
        func take(_ token: Token) -> Bool {
            guard tokens.first == token else { return false }
            tokens.removeFirst()
            return true
        }
        func string() -> String? {
            guard case .string(let value)? = tokens.first else { return nil }
            tokens.removeFirst()
            return value
        }
        func flag() -> Bool? {
            guard case .word(let word)? = tokens.first, let value = ["YES": true, "TRUE": true, "NO": false, "FALSE": false][word.uppercased()] else {
                return nil
            }
            tokens.removeFirst()
            return value
        }
        guard take(.word("FETCH")), take(.open), take(.word("FUNCTION")), take(.open), take(.word("$manager")), take(.comma),
              let selector = string(), take(.comma), let entity = string(), take(.comma), let predicate = string() else { return nil }
        var includesSubentities = false
        switch selector {
        case "fetchRequestForSourceEntityNamed:predicateString:":
            break
        case "fetchRequestForSourceEntityNamed:predicateString:includesSubentities:":
            guard take(.comma), let flag = flag() else { return nil }
            includesSubentities = flag
        default:
            return nil
        }
        guard take(.close), take(.comma) else { return nil }
        // The context: the migration's source context, as a key path or a function of `$manager`.
        let keyPath: [Token] = [.word("$manager"), .dot, .word("sourceContext")]
        let function: [Token] = [.word("FUNCTION"), .open, .word("$manager"), .comma, .string("sourceContext"), .close]
        if tokens.starts(with: keyPath) {
            tokens.removeFirst(keyPath.count)
        } else if tokens.starts(with: function) {
            tokens.removeFirst(function.count)
        } else {
            return nil
        }
        guard take(.comma), flag() == false, take(.close), tokens.isEmpty, !entity.isEmpty else { return nil }
        return MappingSourceExpression(entityName: entity, predicateFormat: predicate.isEmpty ? "TRUEPREDICATE" : predicate,
                                       includesSubentities: includesSubentities)
    }

    /// The pieces of a source expression: words (`FETCH`, `$manager`, `NO`), quoted strings (with
    /// backslash escapes), and punctuation; anything else is a token no form has.
    private enum Token: Equatable {
        case word(String)
        case string(String)
        case open, close, comma, dot, other

        static func scan(_ text: String) -> [Token] {
            var tokens: [Token] = []
            var characters = text[...]
            while let character = characters.first {
                if character.isWhitespace {
                    characters.removeFirst()
                } else if character == "\"" || character == "'" {
                    characters.removeFirst()
                    var value = ""
                    var closed = false
                    while let next = characters.popFirst() {
                        if next == character {
                            closed = true
                            break
                        }
                        if next == "\\", let escaped = characters.popFirst() { value.append(escaped) } else { value.append(next) }
                    }
                    tokens.append(closed ? .string(value) : .other)
                } else if character.isLetter || character.isNumber || character == "$" || character == "_" {
                    let word = characters.prefix { $0.isLetter || $0.isNumber || $0 == "$" || $0 == "_" }
                    characters.removeFirst(word.count)
                    tokens.append(.word(String(word)))
                } else {
                    characters.removeFirst()
                    tokens.append(["(": .open, ")": .close, ",": .comma, ".": .dot][character] ?? .other)
                }
            }
            return tokens
        }
    }
}
