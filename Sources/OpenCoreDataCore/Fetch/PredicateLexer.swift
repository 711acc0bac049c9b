import Foundation

/// A token of Apple's predicate format syntax, with where it starts in the format string.
package struct PredicateToken: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case identifier(String)        // key path or keyword (keywords are matched case-insensitively)
        case string(String)
        case integer(Int64)
        case double(Double)
        case specifier(String)         // %@, %K, %d, %i, %ld, %lld, %u, %f, %lf, %s
        case variable(String)          // $NAME
        case symbol(String)            // ( ) { } , == = != <> < <= =< > >= => && || !
        case modifier(String)          // [c] [d] [cd] after an operator
        case end
    }
    package var kind: Kind
    package var offset: Int
}

/// Splits a predicate format string into tokens.
package struct PredicateLexer {
    private let chars: [Character]
    /// The format's UTF-8 bytes, and where each character starts among them (then the end): a
    /// token's text is cut out of the bytes (a `String` built from `Character`s cost thousands of
    /// instructions per token).
    private let bytes: [UInt8]
    private let starts: [Int]
    private var index = 0
    private let format: String

    package init(_ format: String) {
        self.format = format
        var copy = format
        let bytes = copy.withUTF8 { Array($0) }
        // An ASCII format (without "\r", which joins a following "\n" into one character) is a
        // character per byte: no grapheme breaking, which cost hundreds of instructions a character.
        if !bytes.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\r") }) {
            chars = bytes.map { Character(Unicode.Scalar($0)) }
            starts = Array(0...bytes.count)
            self.bytes = bytes
            return
        }
        var chars: [Character] = []
        var starts: [Int] = []
        chars.reserveCapacity(bytes.count)
        starts.reserveCapacity(bytes.count + 1)
        var offset = 0
        for character in format {
            chars.append(character)
            starts.append(offset)
            offset += character.utf8.count
        }
        starts.append(offset)
        self.chars = chars
        self.starts = starts
        self.bytes = bytes
    }

    /// The text of the characters in `range`.
    private func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[starts[range.lowerBound]..<starts[range.upperBound]], as: UTF8.self)
    }

    package mutating func tokenize() throws(CoreDataError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            skipWhitespace()
            guard index < chars.count else {
                tokens.append(PredicateToken(kind: .end, offset: index))
                return tokens
            }
            let start = index
            let c = chars[index]
            let kind: PredicateToken.Kind
            if c == "'" || c == "\"" {
                kind = .string(try readString(quote: c))
            } else if c.isNumberFast || (c == "." && peek(1)?.isNumberFast == true) {
                kind = try readNumber()
            } else if c == "-" && (peek(1)?.isNumberFast == true || (peek(1) == "." && peek(2)?.isNumberFast == true)) && lastAllowsSign(tokens) {
                index += 1
                switch try readNumber() {
                case .integer(let v): kind = .integer(-v)
                case .double(let v): kind = .double(-v)
                default: kind = .end
                }
            } else if c.isLetterFast || c == "_" || c == "@" || c == "#" || (c == "." && peek(1) == "@") {
                kind = .identifier(readIdentifier())
            } else if c == "$" {
                index += 1
                let name = readIdentifier()
                guard !name.isEmpty else { throw error("expected a variable name after '$'", at: start) }
                kind = .variable(name)
            } else if c == "%" {
                kind = try readSpecifier()
            } else {
                kind = try readSymbol()
            }
            tokens.append(PredicateToken(kind: kind, offset: start))
        }
    }

    private func peek(_ ahead: Int) -> Character? {
        index + ahead < chars.count ? chars[index + ahead] : nil
    }

    private func lastAllowsSign(_ tokens: [PredicateToken]) -> Bool {
        guard let last = tokens.last else { return true }
        switch last.kind {
        case .symbol(let s): return s != ")" && s != "}"
        case .identifier(let word): return ["AND", "OR", "NOT", "IN", "BETWEEN"].contains(word.uppercased())
        default: return false
        }
    }

    private mutating func skipWhitespace() {
        while index < chars.count, chars[index].isWhitespaceFast { index += 1 }
    }

    private mutating func readString(quote: Character) throws(CoreDataError) -> String {
        let start = index
        index += 1
        var result = ""
        while index < chars.count {
            let c = chars[index]
            index += 1
            if c == quote { return result }
            if c == "%", index < chars.count, chars[index] == "%" {
                // `%%` is a percent sign, as in format strings.
                index += 1
                result.append("%")
                continue
            }
            if c == "\\" {
                guard index < chars.count else { break }
                let e = chars[index]
                index += 1
                switch e {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "0": result.append("\0")
                case "u":
                    let hex = String(chars[index..<min(index + 4, chars.count)])
                    guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                        throw error("expected four hexadecimal digits after \\u", at: index - 2)
                    }
                    result.unicodeScalars.append(scalar)
                    index += 4
                default: result.append(e)
                }
            } else {
                result.append(c)
            }
        }
        throw error("the string that starts here is never closed (missing \(quote))", at: start)
    }

    private mutating func readNumber() throws(CoreDataError) -> PredicateToken.Kind {
        let start = index
        if chars[index] == "0", let x = peek(1), x == "x" || x == "X" {
            index += 2
            let digitsStart = index
            while index < chars.count, chars[index].isHexDigit { index += 1 }
            guard let value = Int64(String(chars[digitsStart..<index]), radix: 16) else { throw error("malformed hexadecimal number", at: start) }
            return .integer(value)
        }
        var isDouble = false
        while index < chars.count {
            let c = chars[index]
            if c.isNumberFast { index += 1 }
            else if c == "." && !isDouble { isDouble = true; index += 1 }
            else if (c == "e" || c == "E"), let n = peek(1), n.isNumberFast || ((n == "-" || n == "+") && peek(2)?.isNumberFast == true) {
                isDouble = true
                index += 2
            } else { break }
        }
        let number = text(start..<index)
        if !isDouble, let value = Int64(number) { return .integer(value) }
        guard let value = Double(number) else { throw error("malformed number '\(number)'", at: start) }
        return .double(value)
    }

    private mutating func readIdentifier() -> String {
        let start = index
        if index < chars.count, chars[index] == "#" { index += 1 }
        while index < chars.count {
            let c = chars[index]
            if c.isLetterFast || c.isNumberFast || c == "_" || c == "@" || c == "." { index += 1 } else { break }
        }
        return text(start..<index)
    }

    /// The format specifiers after `%`, longest first where one begins another, with their characters.
    private static let specifiers: [(String, [Character])] = ["@", "K", "lld", "ld", "lu", "lf", "d", "i", "u", "f", "s", "%"].map { ($0, Array($0)) }

    private mutating func readSpecifier() throws(CoreDataError) -> PredicateToken.Kind {
        let start = index
        index += 1
        for (spec, s) in Self.specifiers {
            if index + s.count <= chars.count, chars[index..<index + s.count].elementsEqual(s) {
                index += s.count
                if spec == "%" { throw error("""
                    '%%' is a literal percent sign and cannot stand alone in a predicate; put it inside a \
                    string
                    """, at: start) }
                return .specifier("%" + spec)
            }
        }
        throw error("unknown format specifier; use %@, %K, %d, %i, %ld, %lld, %u, %f, %lf or %s", at: start)
    }

    private mutating func readSymbol() throws(CoreDataError) -> PredicateToken.Kind {
        let two = index + 1 < chars.count ? text(index..<index + 2) : ""
        for symbol in ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"] where two == symbol {
            index += 2
            return .symbol(symbol)
        }
        let one = String(chars[index])
        if one == "[" {
            let start = index
            index += 1
            var letters = ""
            while index < chars.count, chars[index] != "]" {
                letters.append(chars[index])
                index += 1
            }
            guard index < chars.count else { throw error("the modifier that starts here is never closed (missing ])", at: start) }
            index += 1
            return .modifier(letters)
        }
        if ["(", ")", "{", "}", ",", "=", "<", ">", "!", "+", "-", "*", "/"].contains(one) {
            index += 1
            return .symbol(one)
        }
        throw error("unexpected character '\(one)'", at: index)
    }

    private func error(_ message: String, at offset: Int) -> CoreDataError {
        PredicateParser.syntaxError(format: format, message, at: offset)
    }
}

private extension Character {
    // `isWhitespace`, `isLetter` and `isNumber`, answered for ASCII without Unicode's property
    // tables (identical for every ASCII character and for "\r\n"): the predicates apps write are
    // ASCII, and these questions were most of the 20,000 instructions a short format cost to read.
    var isWhitespaceFast: Bool {
        if let ascii = asciiValue { return ascii == 32 || (ascii >= 9 && ascii <= 13) }
        return isWhitespace
    }

    var isLetterFast: Bool {
        if let ascii = asciiValue { return (ascii >= 65 && ascii <= 90) || (ascii >= 97 && ascii <= 122) }
        return isLetter
    }

    var isNumberFast: Bool {
        if let ascii = asciiValue { return ascii >= 48 && ascii <= 57 }
        return isNumber
    }
}
