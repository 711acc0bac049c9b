import Foundation

/// The stored form of one attribute value: what a snapshot, a row cache entry and a store
/// row hold.
///
/// Each attribute type has one case (integers of every width share ``integer(_:)``,
/// `Double` and `Float` share ``double(_:)``); ``null`` is a missing value. Values are
/// `Sendable`, so snapshots move freely between contexts and the coordinator.
public enum ManagedValue: Sendable, Hashable, CustomStringConvertible {
    /// No value (`nil`, SQL `NULL`).
    case null
    /// Integer 16, 32 and 64.
    case integer(Int64)
    /// Boolean.
    case bool(Bool)
    /// Double and Float.
    case double(Double)
    /// Decimal.
    case decimal(Decimal)
    /// String.
    case string(String)
    /// Date.
    case date(Date)
    /// Binary data.
    case data(Data)
    /// UUID.
    case uuid(UUID)
    /// URI.
    case url(URL)
    /// The destination of a to-one relationship.
    case object(ManagedObjectID)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this is a floating-point NaN: a double, a decimal, or a date whose interval is NaN.
    /// No store keeps one (SQLite turns NaN into NULL, so it would read back as nil or 0): saves
    /// and batch requests refuse it, and a predicate reads it as nil.
    package var isNaN: Bool {
        switch self {
        case .double(let v): v.isNaN
        case .decimal(let v): v.isNaN
        case .date(let v): v.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    public var description: String {
        switch self {
        case .null: "nil"
        case .integer(let v): String(v)
        case .bool(let v): v ? "YES" : "NO"
        case .double(let v): String(v)
        case .decimal(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .date(let v): "\(v)"
        case .data(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .url(let v): v.absoluteString
        case .object(let v): v.description
        }
    }

    /// The value as the Swift type that `value(forKey:)` returns for an attribute of `type`:
    /// `Int16`, `Int32`, `Int64`, `Bool`, `Double`, `Float`, `Decimal`, `String`, `Date`,
    /// `Data`, `UUID` or `URL`; `nil` for ``null``.
    public func anyValue(for type: AttributeType) -> Any? {
        switch (self, type) {
        case (.null, _): nil
        case (.integer(let v), .integer16): Int16(truncatingIfNeeded: v)
        case (.integer(let v), .integer32): Int32(truncatingIfNeeded: v)
        case (.integer(let v), _): v
        case (.bool(let v), _): v
        case (.double(let v), .float): Float(v)
        case (.double(let v), _): v
        case (.decimal(let v), _): v
        case (.string(let v), _): v
        case (.date(let v), _): v
        case (.data(let v), _): v
        case (.uuid(let v), _): v
        case (.url(let v), _): v
        case (.object(let v), _): v
        }
    }

    /// Converts a value of any Swift type to the stored form of an attribute of `type`,
    /// or returns `nil` when the value does not fit (wrong type, integer out of range).
    ///
    /// Accepts every Swift integer and floating-point type and `NSNumber` for numeric
    /// attributes, `String`/`NSString` for strings, `Date`, `Data`, `UUID`, `URL`, `Decimal`.
    public init?(converting value: Any?, to type: AttributeType) {
        guard let value else { self = .null; return }
        // The common case first: a value of the attribute's own type (`as?` also looks inside a
        // non-nil Optional). Nil hidden in an `Any` and NSNull are checked only when that fails.
        if let converted = Self.direct(value, type) {
            self = converted
            return
        }
        if value is NSNull { self = .null; return }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { self = .null; return }
            self.init(converting: wrapped, to: type)
            return
        }
        self.init(convertingOther: value, to: type)
    }

    /// `init(converting:to:)` for a value known not to be an optional's nil: a value of the
    /// attribute's own type is converted without wrapping it in an `Optional` first.
    package static func converting(_ value: Any, to type: AttributeType) -> ManagedValue? {
        direct(value, type) ?? ManagedValue(converting: .some(value), to: type)
    }

    private static func direct(_ value: Any, _ type: AttributeType) -> ManagedValue? {
        switch type {
        case .string: (value as? String).map { .string($0) }
        case .integer32: (value as? Int32).map { .integer(Int64($0)) }
        case .integer64: (value as? Int64).map { .integer($0) } ?? (value as? Int).map { .integer(Int64($0)) }
        case .integer16: (value as? Int16).map { .integer(Int64($0)) }
        case .double: (value as? Double).map { .double($0) }
        case .date: (value as? Date).map { .date($0) }
        case .boolean: (value as? Bool).map { .bool($0) }
        default: nil
        }
    }

    private init?(convertingOther value: Any, to type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64:
            guard let v = Self.integer(from: value) else { return nil }
            let (lo, hi): (Int64, Int64) = switch type {
            case .integer16: (Int64(Int16.min), Int64(Int16.max))
            case .integer32: (Int64(Int32.min), Int64(Int32.max))
            default: (Int64.min, Int64.max)
            }
            guard v >= lo && v <= hi else { return nil }
            self = .integer(v)
        case .boolean:
            if let b = value as? Bool { self = .bool(b) }
            else if let v = Self.integer(from: value), v == 0 || v == 1 { self = .bool(v == 1) }
            else { return nil }
        case .double, .float:
            if let d = value as? Double { self = .double(d) }
            else if let f = value as? Float { self = .double(Double(f)) }
            else if let v = Self.integer(from: value) { self = .double(Double(v)) }
            else if let n = value as? NSNumber { self = .double(n.doubleValue) }
            else { return nil }
        case .decimal:
            if let d = value as? Decimal { self = .decimal(d) }
            else if let v = Self.integer(from: value) { self = .decimal(Decimal(v)) }
            else if let d = value as? Double { self = .decimal(Decimal(d)) }
            else { return nil }
        case .string:
            if let s = value as? String { self = .string(s) }
            else if let s = value as? NSString { self = .string(s as String) }
            else { return nil }
        case .date:
            guard let d = value as? Date else { return nil }
            self = .date(d)
        case .binaryData, .transformable:
            guard let d = value as? Data else { return nil }
            self = .data(d)
        case .uuid:
            guard let u = value as? UUID else { return nil }
            self = .uuid(u)
        case .uri:
            guard let u = value as? URL else { return nil }
            self = .url(u)
        case .objectID:
            if let id = value as? ManagedObjectID { self = .object(id) }
            else if let object = value as? ManagedObject { self = .object(object.objectID) }
            else { return nil }
        }
    }

    private static func integer(from value: Any) -> Int64? {
        switch value {
        case let v as Int: Int64(v)
        case let v as Int64: v
        case let v as Int32: Int64(v)
        case let v as Int16: Int64(v)
        case let v as Int8: Int64(v)
        case let v as UInt: Int64(exactly: v)
        case let v as UInt64: Int64(exactly: v)
        case let v as UInt32: Int64(v)
        case let v as UInt16: Int64(v)
        case let v as UInt8: Int64(v)
        case let v as Bool: v ? 1 : 0
        case let v as NSNumber where !(value is Double) && !(value is Float):
            Int64(exactly: v.doubleValue)
        default: nil
        }
    }
}

/// Lets `ManagedValue(converting:to:)` look inside an `Optional` hidden in an `Any`.
package protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    package var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
}
