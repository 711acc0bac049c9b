import Foundation

/// The string operators of the predicate language, with their `[cd]` modifiers: one
/// implementation, used in memory and — registered as the SQL function `ocd_match` — by the
/// SQLite store, so that both evaluators give the same answer.
///
/// Without modifiers strings compare by their UTF-8 bytes, as SQLite's BINARY collation does.
/// `[c]` folds case and `[d]` removes diacritics (Foundation's folding) before comparing.
/// Empty patterns match nothing for CONTAINS, BEGINSWITH and ENDSWITH, as `NSString` does;
/// `nil` matches nothing (and is unequal to every string).
package enum StringMatching {
    /// Operator codes shared with the SQL function.
    package static func code(_ op: ComparisonOperator) -> Int32 {
        switch op {
        case .equal: 0
        case .notEqual: 1
        case .contains: 2
        case .beginsWith: 3
        case .endsWith: 4
        case .like: 5
        case .matches: 6
        default: -1
        }
    }

    package static func op(code: Int32) -> ComparisonOperator? {
        [.equal, .notEqual, .contains, .beginsWith, .endsWith, .like, .matches].first { self.code($0) == code }
    }

    package static func evaluate(_ op: ComparisonOperator, options: ComparisonOptions, value: String?, pattern: String) -> Bool {
        guard let value else { return op == .notEqual }
        if op == .matches { return regexMatches(value, pattern: pattern, options: options) }
        let lhs = Array(fold(value, options).utf8)
        let rhs = Array(fold(pattern, options).utf8)
        switch op {
        case .equal: return lhs == rhs
        case .notEqual: return lhs != rhs
        case .contains: return !rhs.isEmpty && contains(lhs, rhs)
        case .beginsWith: return !rhs.isEmpty && lhs.starts(with: rhs)
        case .endsWith: return !rhs.isEmpty && lhs.count >= rhs.count && Array(lhs.suffix(rhs.count)) == rhs
        case .like: return like(Array(fold(value, options).unicodeScalars), Array(fold(pattern, options).unicodeScalars))
        default: return false
        }
    }

    package static func fold(_ string: String, _ options: ComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return string }
        return string.folding(options: folding, locale: nil)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }

    /// LIKE: `*` matches any run of characters, `?` exactly one; everything else (`%` and `_`
    /// included) is literal. The whole string must match.
    private static func like(_ value: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var v = 0, p = 0
        var starP = -1, starV = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == value[v])) {
                v += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                starP = p
                starV = v
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starV += 1
                v = starV
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    private static let regexCache = Locked<[String: NSRegularExpression]>([:])

    /// MATCHES: an ICU regular expression that must match the whole string.
    private static func regexMatches(_ value: String, pattern: String, options: ComparisonOptions) -> Bool {
        let key = "\(options.rawValue):\(pattern)"
        let regex: NSRegularExpression? = regexCache.withLock { cache in
            if let cached = cache[key] { return cached }
            var regexOptions: NSRegularExpression.Options = []
            if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
            let compiled = wholeStringRegex(options.contains(.diacriticInsensitive) ? fold(pattern, [.diacriticInsensitive]) : pattern,
                                            options: regexOptions)
            if cache.count > 256 { cache.removeAll() }
            cache[key] = compiled
            return compiled
        }
        guard let regex else { return false }
        let subject = options.contains(.diacriticInsensitive) ? fold(value, [.diacriticInsensitive]) : value
        let range = NSRange(subject.startIndex..., in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }

    /// Whether a MATCHES pattern compiles (the binder reports bad patterns as errors).
    package static func isValidRegex(_ pattern: String) -> Bool {
        wholeStringRegex(pattern, options: []) != nil
    }

    /// The pattern anchored to the whole string, or nil when it is not a regular expression.
    /// The pattern must compile on its own first: only a pattern with an unbalanced `)` (like
    /// `a)|(b`) could close the group we wrap it in and escape the anchors, and such a pattern
    /// is not valid alone. One whose comments or quoting swallow our suffix fails to compile.
    private static func wholeStringRegex(_ pattern: String, options: NSRegularExpression.Options) -> NSRegularExpression? {
        // (ICU refuses an empty pattern on its own; anchored it matches the empty string.)
        guard pattern.isEmpty || (try? NSRegularExpression(pattern: pattern, options: options)) != nil else { return nil }
        return try? NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: options)
    }
}
