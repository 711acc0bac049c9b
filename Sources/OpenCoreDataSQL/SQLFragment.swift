import OpenCoreDataCore

/// An SQL statement, or a part of one, kept as structure until it runs: text written in this
/// code, identifiers from the layout, and values, every one of them bound. The dialect renders it
/// when it runs (``rendered(for:)``: `?` for SQLite; `$1, $2, …` for PostgreSQL, numbered across
/// the whole statement), so no code edits SQL text or numbers a placeholder by hand, and a part
/// composed into another statement keeps its values in order.
///
/// Composed by value, with string interpolation, `+`, ``append(_:)`` and ``joined(_:separator:)``:
///
///     let keys: [ManagedValue] = …
///     let query: SQLFragment = "SELECT Z_PK FROM \(identifier: table) WHERE Z_PK IN (\(list: keys))"
///
/// The literal parts are SQL written in the code; what varies is interpolated as an
/// `identifier:` (a name from the layout: written bare when it is a plain name, as every name the
/// layout makes is, else quoted), a `quoted:` name that keeps its spelling (a user's schema), a
/// `bind:` value, a `list:` of values, `parameters:` bound when a statement prepared once runs, a
/// nested fragment, or `sql:` text that this code made (a dialect's spelling of a type or an
/// operator).
package struct SQLFragment: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// One part of a fragment.
    package enum Segment: Sendable, Equatable {
        /// SQL text written in the code.
        case sql(String)
        /// A table, column, index or alias name from the layout: bare when plain, so that
        /// PostgreSQL folds it to lower case as it folded the name when the table was made.
        case identifier(String)
        /// A name that must keep its exact spelling (a schema or channel named by the user, a
        /// catalog name read back): always quoted, inner quotes doubled.
        case quotedIdentifier(String)
        /// One value, as one placeholder.
        case bind(ManagedValue)
        /// Values as comma-separated placeholders (`?, ?, ?`), for `IN (…)` and `VALUES (…)`.
        case list([ManagedValue])
        /// Placeholders for values bound each time the statement runs (a statement prepared once
        /// and run for many rows binds them by position): comma-separated, numbered in order with
        /// the bound values around them.
        case parameters(Int)
    }

    /// The parts, in order (adjacent SQL text is kept as one part).
    package private(set) var segments: [Segment] = []

    /// An empty fragment.
    package init() {}

    /// A fragment of SQL text written in the code (no values).
    package init(sql: String) {
        if !sql.isEmpty { segments = [.sql(sql)] }
    }

    package init(stringLiteral value: String) {
        self.init(sql: value)
    }

    package init(stringInterpolation: Interpolation) {
        segments = stringInterpolation.fragment.segments
    }

    /// Whether the fragment has no part.
    package var isEmpty: Bool { segments.isEmpty }

    /// The values the fragment binds, in the order of their placeholders (without the
    /// ``Segment/parameters(_:)``, which the caller binds).
    package var arguments: [ManagedValue] {
        var values: [ManagedValue] = []
        for segment in segments {
            switch segment {
            case .bind(let value): values.append(value)
            case .list(let list): values.append(contentsOf: list)
            case .sql, .identifier, .quotedIdentifier, .parameters: break
            }
        }
        return values
    }

    /// Appends SQL text written in the code.
    package mutating func append(sql text: String) {
        guard !text.isEmpty else { return }
        if case .sql(let last)? = segments.last {
            segments[segments.count - 1] = .sql(last + text)
        } else {
            segments.append(.sql(text))
        }
    }

    /// Appends another fragment's parts (its values come after this one's).
    package mutating func append(_ other: SQLFragment) {
        for segment in other.segments {
            if case .sql(let text) = segment { append(sql: text) } else { segments.append(segment) }
        }
    }

    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        var result = lhs
        result.append(rhs)
        return result
    }

    package static func += (lhs: inout SQLFragment, rhs: SQLFragment) {
        lhs.append(rhs)
    }

    /// The fragments one after another, `separator` (SQL text) between each two.
    package static func joined(_ parts: some Sequence<SQLFragment>, separator: String) -> SQLFragment {
        var result = SQLFragment()
        var first = true
        for part in parts {
            if !first { result.append(sql: separator) }
            first = false
            result.append(part)
        }
        return result
    }

    /// Names from the layout, comma-separated.
    package static func identifiers(_ names: [String]) -> SQLFragment {
        var result = SQLFragment()
        for (index, name) in names.enumerated() {
            if index > 0 { result.append(sql: ", ") }
            result.segments.append(.identifier(name))
        }
        return result
    }

    /// The fragment as one piece of SQL text, for a fragment of names and code's text that is
    /// composed into many statements (a table's column list): names are written the same way in
    /// every dialect, so rendering them once saves writing (and checking) each name every time.
    /// Nil for a fragment with values or placeholders, whose text depends on the dialect.
    package var prerendered: SQLFragment? {
        for segment in segments {
            switch segment {
            case .sql, .identifier, .quotedIdentifier: continue
            case .bind, .list, .parameters: return nil
            }
        }
        return SQLFragment(sql: rendered(for: .sqlite).sql)
    }

    /// Numbers this code knows (entity numbers from the layout), comma-separated, as SQL.
    package static func numbers(_ values: [Int]) -> SQLFragment {
        SQLFragment(sql: values.map(String.init).joined(separator: ", "))
    }

    /// The statement's text in `dialect` and its values in placeholder order (a
    /// ``Segment/parameters(_:)`` placeholder's value is `null` there, to be bound by the caller).
    package func rendered(for dialect: SQLDialect) -> (sql: String, arguments: [ManagedValue]) {
        var text: [UInt8] = []
        text.reserveCapacity(256)   // a fetch's statement, without growing the buffer on the way
        var arguments: [ManagedValue] = []
        for segment in segments {
            switch segment {
            case .sql(let sql):
                text.append(contentsOf: sql.utf8)
            case .identifier(let name):
                Self.write(identifier: name, into: &text)
            case .quotedIdentifier(let name):
                Self.write(quoted: name, into: &text)
            case .bind(let value):
                arguments.append(dialect.boundValue(value))
                dialect.writePlaceholders(from: arguments.count, count: 1, into: &text)
            case .list(let values):
                let first = arguments.count + 1
                for value in values { arguments.append(dialect.boundValue(value)) }
                dialect.writePlaceholders(from: first, count: values.count, into: &text)
            case .parameters(let count):
                // Numbered as if bound here: the caller binds them at these positions.
                let first = arguments.count + 1
                arguments.append(contentsOf: repeatElement(.null, count: count))
                dialect.writePlaceholders(from: first, count: count, into: &text)
            }
        }
        return (String(decoding: text, as: UTF8.self), arguments)
    }

    /// The statement's text in `dialect` and its values, with `parameters` bound in the places of
    /// its ``Segment/parameters(_:)`` placeholders, in order.
    package func rendered(for dialect: SQLDialect, parameters: [ManagedValue]) -> (sql: String, arguments: [ManagedValue]) {
        var (sql, arguments) = rendered(for: dialect)
        var next = parameters.makeIterator()
        var position = 0
        for segment in segments {
            switch segment {
            case .bind: position += 1
            case .list(let values): position += values.count
            case .parameters(let count):
                for index in position..<(position + count) { arguments[index] = dialect.boundValue(next.next() ?? .null) }
                position += count
            case .sql, .identifier, .quotedIdentifier: break
            }
        }
        return (sql, arguments)
    }

    /// The SQLite rendering, for messages and tests.
    package var description: String { rendered(for: .sqlite).sql }

    /// A name as SQL: bare when it is a plain name (ASCII letters, digits and `_`, not starting
    /// with a digit: every name the layout makes, which both databases then read the same way),
    /// else in double quotes with quotes doubled, so that no name can end the identifier.
    private static func write(identifier name: String, into text: inout [UInt8]) {
        let plain = !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        } && !(name.utf8.first.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false)
        guard !plain else {
            text.append(contentsOf: name.utf8)
            return
        }
        write(quoted: name, into: &text)
    }

    /// A name in double quotes, its quotes doubled.
    private static func write(quoted name: String, into text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        for byte in name.utf8 {
            if byte == UInt8(ascii: "\"") { text.append(byte) }
            text.append(byte)
        }
        text.append(UInt8(ascii: "\""))
    }

    /// Builds a fragment from a string literal with interpolated parts.
    package struct Interpolation: StringInterpolationProtocol {
        fileprivate var fragment = SQLFragment()

        package init(literalCapacity: Int, interpolationCount: Int) {
            fragment.segments.reserveCapacity(2 * interpolationCount + 1)
        }

        package mutating func appendLiteral(_ literal: String) {
            fragment.append(sql: literal)
        }

        /// Another fragment, its values in place.
        package mutating func appendInterpolation(_ other: SQLFragment) {
            fragment.append(other)
        }

        /// A name from the layout.
        package mutating func appendInterpolation(identifier name: String) {
            fragment.segments.append(.identifier(name))
        }

        /// A name kept exactly as spelled (always quoted).
        package mutating func appendInterpolation(quoted name: String) {
            fragment.segments.append(.quotedIdentifier(name))
        }

        /// A name of `schema`, both kept exactly as spelled (`"schema"."name"`).
        package mutating func appendInterpolation(quoted name: String, in schema: String) {
            fragment.segments.append(.quotedIdentifier(schema))
            fragment.append(sql: ".")
            fragment.segments.append(.quotedIdentifier(name))
        }

        /// One bound value.
        package mutating func appendInterpolation(bind value: ManagedValue) {
            fragment.segments.append(.bind(value))
        }

        /// Bound values, comma-separated.
        package mutating func appendInterpolation(list values: [ManagedValue]) {
            fragment.segments.append(.list(values))
        }

        /// Placeholders for `count` values bound when the statement runs.
        package mutating func appendInterpolation(parameters count: Int) {
            fragment.segments.append(.parameters(count))
        }

        /// SQL text this code made (a dialect's spelling, a keyword chosen by a condition).
        package mutating func appendInterpolation(sql text: String) {
            fragment.append(sql: text)
        }

        /// A number this code knows (an entity number, a count), written as SQL.
        package mutating func appendInterpolation(number: Int) {
            fragment.append(sql: String(number))
        }
    }
}
