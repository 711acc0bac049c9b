import Foundation

/// Converts the values of a Transformable attribute between what the app works with and the
/// bytes stored in the column. Register one under the attribute's `valueTransformerName` with
/// ``ValueTransformers/register(_:forName:)``; Core Data's `ValueTransformer` subclasses play this
/// role on Apple platforms (Foundation on Linux has no `ValueTransformer`).
///
/// ```swift
/// struct ColorsTransformer: ValueTransforming {
///     func transformedValue(_ value: Any?) -> Data? { (value as? [UInt8]).map { Data($0) } }
///     func reverseTransformedValue(_ data: Data?) -> Any? { data.map { [UInt8]($0) } }
/// }
/// ValueTransformers.register(ColorsTransformer(), forName: "ColorsTransformer")
/// ```
public protocol ValueTransforming: Sendable {
    /// The app's value as the bytes to store; nil stores NULL.
    func transformedValue(_ value: Any?) -> Data?
    /// The stored bytes as the app's value; nil when they cannot be read.
    func reverseTransformedValue(_ data: Data?) -> Any?
}

/// The registry of value transformers by name, shared by every model (Core Data looks them up
/// with `ValueTransformer(forName:)`). `NSSecureUnarchiveFromData` and `NSKeyedUnarchiveFromData`
/// are registered from the start; a Transformable attribute without a transformer name uses
/// `NSSecureUnarchiveFromData`, as Core Data does.
public enum ValueTransformers {
    // Guarded by its lock; read on every Transformable access, written by registrations.
    private static let registry = Locked<[String: any ValueTransforming]>([
        "NSSecureUnarchiveFromData": SecureUnarchiveFromDataTransformer(),
        "NSKeyedUnarchiveFromData": SecureUnarchiveFromDataTransformer(),
    ])

    /// Registers `transformer` under `name`, replacing any earlier one; nil removes it.
    public static func register(_ transformer: (any ValueTransforming)?, forName name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`.
    public static func transformer(forName name: String) -> (any ValueTransforming)? {
        registry.withLock { $0[name] }
    }

    /// The names of the registered transformers.
    public static var names: [String] { registry.withLock { $0.keys.sorted() } }
}

/// Core Data's `NSSecureUnarchiveFromDataTransformer`: values of Foundation's plist-like types
/// (strings, numbers, dates, data, URLs, UUIDs, and arrays, dictionaries and sets of them)
/// archived with `NSKeyedArchiver`. Strings come back as `String`, collections as Swift
/// collections; numbers as `NSNumber` (cast with `as? Int`, `as? Double`).
public struct SecureUnarchiveFromDataTransformer: ValueTransforming {
    /// The classes an archive may contain.
    public static let allowedTopLevelClasses: [AnyClass] = [
        NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self,
        NSData.self, NSURL.self, NSUUID.self, NSNull.self,
    ]

    /// Makes the transformer.
    public init() {}

    public func transformedValue(_ value: Any?) -> Data? {
        guard let value, let object = Self.foundationObject(value) else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
    }

    /// The archived value; nil for bytes that are not a keyed archive of the allowed classes.
    /// Read with this library's own bounded archive reader: Foundation's `NSKeyedUnarchiver`
    /// traps on some crafted archives on Linux, and stored bytes may come from anywhere.
    public func reverseTransformedValue(_ data: Data?) -> Any? {
        guard let data, let archive = try? KeyedArchive(data,
                                                        workBudget: KeyedArchive.foundationValueBudget(byteCount: data.count)) else { return nil }
        return archive.foundationValue()
    }

    private static func foundationObject(_ value: Any) -> AnyObject? {
        switch value {
        case let array as NSArray: array
        case let dictionary as NSDictionary: dictionary
        case let set as NSSet: set
        case let string as NSString: string
        case let number as NSNumber: number
        case let date as NSDate: date
        case let data as NSData: data
        case let url as NSURL: url
        case let uuid as NSUUID: uuid
        case let null as NSNull: null
        default: nil
        }
    }
}

extension AttributeDescription {
    /// The transformer of a Transformable attribute: the one registered under its
    /// `valueTransformerName` (`NSSecureUnarchiveFromData` when it has none); nil for other types
    /// and for names nobody registered, whose values stay the stored `Data`.
    package var transformer: (any ValueTransforming)? {
        guard attributeType == .transformable else { return nil }
        return ValueTransformers.transformer(forName: valueTransformerName ?? "NSSecureUnarchiveFromData")
    }

    /// A stored value as the app sees it (through the transformer for Transformable attributes).
    package func appValue(_ stored: ManagedValue) -> Any? {
        if let transformer, case .data(let bytes) = stored { return transformer.reverseTransformedValue(bytes) }
        return stored.anyValue(for: attributeType)
    }

    /// An app value in stored form; nil when it does not fit the attribute.
    package func storedValue(_ value: Any?) -> ManagedValue? {
        if let transformer, let value, !(value is NSNull) {
            return transformer.transformedValue(value).map(ManagedValue.data)
        }
        return ManagedValue(converting: value, to: attributeType)
    }
}
