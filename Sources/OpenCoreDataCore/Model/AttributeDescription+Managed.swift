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
        return attribute
    }
}
