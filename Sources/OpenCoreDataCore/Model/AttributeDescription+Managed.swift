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
    /// The model's attribute is mandatory although the Swift type is optional (Xcode's generated
    /// classes declare `String?` for a mandatory string): a `nil` fails the save's validation
    /// (1570), and the version hash is the mandatory attribute's.
    case required
    /// The model's attribute is optional although the Swift type is not (Xcode's scalar
    /// properties: `Int16` for an optional Integer 16): a stored `nil` reads as the default.
    case optional
    /// The attribute's version hash modifier (Core Data's `versionHashModifier`): a new hash for
    /// an attribute whose name and type did not change, so that stores migrate.
    case hashModifier(String)
    /// A Transformable attribute: the property's value (of any type) is stored as the bytes the
    /// transformer registered under `name` makes (``ValueTransformers``;
    /// `NSSecureUnarchiveFromData` when `nil`, as in Core Data).
    case transformable(by: String? = nil)
    /// A derived attribute (Core Data's `NSDerivedAttributeDescription`): the store computes the
    /// value from `expression`, in predicate format (`"count:(pages)"`, `"now()"`,
    /// `"folder.name"`), at every save.
    case derived(String)
}

extension AttributeDescription {
    /// The description of a `@Managed` property: name, type (from the key path), default,
    /// options. Used by the code `@Managed` generates.
    public static func managed<Root: ManagedObject, Value: ManagedAttributeValue>(
        _ name: String, _ keyPath: KeyPath<Root, Value>, default defaultValue: Value, options: Set<AttributeOption> = []
    ) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: Value.attributeType, isOptional: Value.isOptionalType)
        attribute.storedDefault = defaultValue.managedValue
        attribute.apply(options)
        attribute.keyPath = keyPath
        return attribute
    }

    /// The description of a `@Managed` property marked `@Attribute(.transformable(by:))`: a
    /// Transformable attribute whose values are the property's, of any type. Used by the code
    /// `@Managed` generates.
    public static func managedTransformable<Root: ManagedObject, Value>(
        _ name: String, _ keyPath: KeyPath<Root, Value>, isOptional: Bool, options: Set<AttributeOption> = []
    ) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: .transformable, isOptional: isOptional)
        attribute.apply(options)
        attribute.keyPath = keyPath
        return attribute
    }

    /// Sets what a `@Managed` property's options say.
    private func apply(_ options: Set<AttributeOption>) {
        let attribute = self
        attribute.isIndexed = options.contains(.indexed)
        attribute.preservesValueInHistoryOnDeletion = options.contains(.preserveValueOnDeletion)
        attribute.allowsExternalBinaryDataStorage = options.contains(.externalStorage)
        for option in options {
            switch option {
            case .minimum(let value): attribute.minimum = value
            case .maximum(let value): attribute.maximum = value
            case .earliest(let date): attribute.earliestDate = date
            case .latest(let date): attribute.latestDate = date
            case .pattern(let pattern): attribute.regularExpression = pattern
            case .required: attribute.isOptional = false
            case .optional: attribute.isOptional = true
            case .hashModifier(let modifier): attribute.versionHashModifier = modifier
            case .transformable(let name): attribute.valueTransformerName = name
            case .derived(let expression): attribute.derivationExpression = expression
            case .unique, .indexed, .preserveValueOnDeletion, .externalStorage: break
            }
        }
    }
}
