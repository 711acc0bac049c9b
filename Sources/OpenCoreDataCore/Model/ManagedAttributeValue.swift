import Foundation

/// A Swift type that a `@Managed` class can use for an attribute.
///
/// Conforming: `Int16`, `Int32`, `Int64`, `Int`, `Double`, `Float`, `Bool`, `String`,
/// `Date`, `Data`, `UUID`, `URL`, `Decimal`, and `Optional` of any of them.
public protocol ManagedAttributeValue {
    /// The Core Data attribute type that stores values of this Swift type.
    static var attributeType: AttributeType { get }
    /// Whether `nil` is a valid value (true for `Optional`).
    static var isOptionalType: Bool { get }
    /// Reads a stored value; `nil` when the stored value does not hold this type.
    init?(managedValue: ManagedValue)
    /// The stored form of the value.
    var managedValue: ManagedValue { get }
}

extension ManagedAttributeValue {
    /// Non-optional types do not accept `nil`.
    public static var isOptionalType: Bool { false }
}

extension Optional: ManagedAttributeValue where Wrapped: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptionalType: Bool { true }
    @inlinable
    public init?(managedValue: ManagedValue) {
        if case .null = managedValue { self = .none; return }
        guard let wrapped = Wrapped(managedValue: managedValue) else { return nil }
        self = .some(wrapped)
    }
    @inlinable
    public var managedValue: ManagedValue { self?.managedValue ?? .null }
}

extension Int16: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .integer16 }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .integer(let v) = managedValue else { return nil }
        self.init(truncatingIfNeeded: v)
    }
    @inlinable
    public var managedValue: ManagedValue { .integer(Int64(self)) }
}

extension Int32: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .integer32 }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .integer(let v) = managedValue else { return nil }
        self.init(truncatingIfNeeded: v)
    }
    @inlinable
    public var managedValue: ManagedValue { .integer(Int64(self)) }
}

extension Int64: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .integer64 }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .integer(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .integer(self) }
}

extension Int: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .integer64 }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .integer(let v) = managedValue else { return nil }
        self.init(truncatingIfNeeded: v)
    }
    @inlinable
    public var managedValue: ManagedValue { .integer(Int64(self)) }
}

extension Double: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .double }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .double(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .double(self) }
}

extension Float: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .float }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .double(let v) = managedValue else { return nil }
        self.init(v)
    }
    @inlinable
    public var managedValue: ManagedValue { .double(Double(self)) }
}

extension Bool: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .boolean }
    @inlinable
    public init?(managedValue: ManagedValue) {
        switch managedValue {
        case .bool(let v): self = v
        case .integer(let v): self = v != 0
        default: return nil
        }
    }
    @inlinable
    public var managedValue: ManagedValue { .bool(self) }
}

extension String: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .string }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .string(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .string(self) }
}

extension Date: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .date }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .date(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .date(self) }
}

extension Data: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .binaryData }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .data(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .data(self) }
}

extension UUID: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .uuid }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .uuid(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .uuid(self) }
}

extension URL: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .uri }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .url(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .url(self) }
}

extension Decimal: ManagedAttributeValue {
    @inlinable
    public static var attributeType: AttributeType { .decimal }
    @inlinable
    public init?(managedValue: ManagedValue) {
        guard case .decimal(let v) = managedValue else { return nil }
        self = v
    }
    @inlinable
    public var managedValue: ManagedValue { .decimal(self) }
}
