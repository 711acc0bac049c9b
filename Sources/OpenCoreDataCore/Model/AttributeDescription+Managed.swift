import Foundation

/// Options of `@Attribute(…)` in a `@Managed` class (SwiftData's names).
public enum AttributeOption: Sendable, Hashable {
    /// The value is unique among objects of the entity (a uniqueness constraint).
    case unique
    /// The store keeps an index on the attribute.
    case indexed
    /// Persistent history keeps the value when the object is deleted.
    case preserveValueOnDeletion
    /// Large binary values may be stored outside the table.
    case externalStorage
    /// The smallest valid number, or the shortest valid string length.
    case minimum(Double)
    /// The largest valid number, or the longest valid string length.
    case maximum(Double)
    /// The earliest valid date.
    case earliest(Date)
    /// The latest valid date.
    case latest(Date)
    /// A regular expression the whole string must match.
    case pattern(String)
}

extension AttributeDescription {
    /// The description of a `@Managed` property: name, type (from the key path), default,
    /// options. Used by the code `@Managed` generates.
    public static func managed<Root: ManagedObject, Value: ManagedAttributeValue>(
        _ name: String, _ keyPath: KeyPath<Root, Value>, default defaultValue: Value, options: Set<AttributeOption> = []
    ) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: Value.attributeType, isOptional: Value.isOptionalType)
        attribute.storedDefault = defaultValue.managedValue
        attribute.isIndexed = options.contains(.indexed)
        attribute.preservesValueInHistoryOnDeletion = options.contains(.preserveValueOnDeletion)
        attribute.allowsExternalBinaryDataStorage = options.contains(.externalStorage)
        attribute.keyPath = keyPath
        for option in options {
            switch option {
            case .minimum(let value): attribute.minimum = value
            case .maximum(let value): attribute.maximum = value
            case .earliest(let date): attribute.earliestDate = date
            case .latest(let date): attribute.latestDate = date
            case .pattern(let pattern): attribute.regularExpression = pattern
            case .unique, .indexed, .preserveValueOnDeletion, .externalStorage: break
            }
        }
        return attribute
    }
}
