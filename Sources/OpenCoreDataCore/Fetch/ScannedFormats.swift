/// The tokens of the predicate formats read before, by format. Apps build predicates from the
/// same few formats again and again (`NSPredicate(format: "code == %@", code)` for every request),
/// and reading a format into tokens was half of what parsing it cost; the tokens do not depend on
/// the arguments, which the parser substitutes afterwards.
///
/// Bounded: formats longer than `longestFormat` bytes are read every time, and past `capacity`
/// formats the table starts again, so formats with their values written inside (each read once)
/// cannot grow it. Shared by every thread, behind a lock.
enum ScannedFormats {
    /// A format read into tokens, with the index of the `)` that closes each `(`.
    struct Scanned: Sendable {
        let tokens: [PredicateToken]
        let closingParenthesis: [Int: Int]
    }

    static let capacity = 256
    static let longestFormat = 1_024
    private static let table = Locked<[String: Scanned]>([:])

    /// `format` read into tokens (or the error that reading it throws, every time).
    static func scanned(_ format: String) throws(CoreDataError) -> Scanned {
        let cached = format.utf8.count <= longestFormat
        if cached, let hit = table.withLock({ $0[format] }) { return hit }
        var lexer = PredicateLexer(format)
        let tokens = try lexer.tokenize()
        var open: [Int] = []
        var closing: [Int: Int] = [:]
        for (index, token) in tokens.enumerated() {
            if case .symbol("(") = token.kind { open.append(index) }
            if case .symbol(")") = token.kind, let start = open.popLast() { closing[start] = index }
        }
        let scanned = Scanned(tokens: tokens, closingParenthesis: closing)
        if cached {
            table.withLock { formats in
                if formats.count >= capacity { formats.removeAll(keepingCapacity: true) }
                formats[format] = scanned
            }
        }
        return scanned
    }
}
