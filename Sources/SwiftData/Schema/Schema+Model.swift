import Foundation
import OpenCoreDataCore

extension Schema {
    /// The managed object model of the schema: one entity per model class, built from the
    /// classes' `schemaMetadata`. Throws naming a property whose type cannot be stored.
    func makeModel() throws(CoreDataError) -> ManagedObjectModel {
        let entities = try types.map { type throws(CoreDataError) in try Self.entity(for: type) }
        return ManagedObjectModel(entities: entities)
    }

    private static func entity(for type: any PersistentModel.Type) throws(CoreDataError) -> EntityDescription {
        let name = entityName(for: type)
        var properties: [PropertyDescription] = []
        var unique: [[String]] = []
        for metadata in type.schemaMetadata {
            let valueType = Swift.type(of: metadata.keypath).valueType
            if let relationship = try relationship(metadata, valueType: valueType, in: name) {
                properties.append(relationship)
                continue
            }
            let attribute = try attribute(metadata, valueType: valueType, in: name)
            if let options = metadata.metadata as? Attribute, options.options.contains(.unique) {
                unique.append([metadata.name])
            }
            properties.append(attribute)
        }
        let entity = EntityDescription(name: name, managedObjectClass: ManagedObject.self, properties: properties)
        entity.uniquenessConstraints = unique + (try propertyNames(type._$uniquenessConstraints, of: type, for: "#Unique"))
        entity.indexes = try propertyNames(type._$indexes, of: type, for: "#Index").map { names in
            FetchIndexDescription(name: "\(name)_\(names.joined(separator: "_"))_Index", elements: names.map { FetchIndexDescription.Element(property: $0) })
        }
        return entity
    }

    /// The property names of `#Unique` / `#Index` lists; throws naming a key path that is not a
    /// persisted property.
    private static func propertyNames(_ lists: [[AnyKeyPath]], of type: any PersistentModel.Type, for macro: String) throws(CoreDataError) -> [[String]] {
        try lists.map { list throws(CoreDataError) in
            try list.map { keyPath throws(CoreDataError) in
                guard let name = type.schemaMetadata.first(where: { $0.keypath == keyPath })?.name else {
                    throw CoreDataError(.coreData, "\(macro) of \(type) names \(keyPath), which is not a persisted property of \(type).")
                }
                return name
            }
        }
    }

    private static func attribute(_ metadata: PropertyMetadata, valueType: Any.Type, in entity: String) throws(CoreDataError) -> AttributeDescription {
        let options = metadata.metadata as? Attribute
        let kinds = options?.options.map(\.kind) ?? []
        let attribute: AttributeDescription
        if let transformer = kinds.lazy.compactMap({ kind -> String? in
            if case .transformable(let name) = kind { return name }
            return nil
        }).first {
            attribute = AttributeDescription(name: metadata.name, type: .transformable, isOptional: valueType is any _OptionalValue.Type)
            attribute.valueTransformerName = transformer
        } else if let stored = valueType as? any ManagedAttributeValue.Type {
            attribute = AttributeDescription(name: metadata.name, type: stored.attributeType, isOptional: stored.isOptionalType)
            if let value = metadata.defaultValue as? any ManagedAttributeValue {
                attribute.storedDefault = value.managedValue
            }
        } else {
            throw CoreDataError(.coreData, """
                The property '\(metadata.name)' of \(entity) has type \(valueType), which this version cannot \
                store yet: use String, Int (of any width), Double, Float, Bool, Date, Data, UUID, URL, Decimal, an \
                optional of one, another model (optional or not) or an array of models, or store it through \
                @Attribute(.transformable(by:)). Codable structs and enums are stored by SwiftData as \
                composite attributes, which docs/SwiftData.md lists as not yet supported.
                """)
        }
        attribute.keyPath = metadata.keypath
        attribute.isTransient = kinds.contains(.ephemeral)
        attribute.allowsExternalBinaryDataStorage = kinds.contains(.externalStorage)
        attribute.preservesValueInHistoryOnDeletion = kinds.contains(.preserveValueOnDeletion)
        attribute.renamingIdentifier = options?.originalName
        attribute.versionHashModifier = options?.hashModifier
        return attribute
    }

    /// The relationship a property describes, when its type is a model (`Stop`, `Stop?`) or an
    /// array of models (`[Stop]`, `[Stop]?`); nil for other types.
    private static func relationship(_ metadata: PropertyMetadata, valueType: Any.Type, in entity: String) throws(CoreDataError) -> RelationshipDescription? {
        guard let destination = destination(of: valueType) else { return nil }
        let isOptional = valueType is any _OptionalValue.Type
        let unwrapped = (valueType as? any _OptionalValue.Type)?.wrappedType ?? valueType
        let toMany = unwrapped is any _ArrayValue.Type
        let options = metadata.metadata as? Relationship
        let deleteRule: DeleteRule = switch options?.deleteRule ?? .nullify {
        case .noAction: .noAction
        case .nullify: .nullify
        case .cascade: .cascade
        case .deny: .deny
        }
        // A to-many relationship may be empty (SwiftData models it as optional); a to-one is
        // optional when its property is.
        let relationship = RelationshipDescription(name: metadata.name, destination: entityName(for: destination), toMany: toMany,
                                                   isOptional: toMany || isOptional, deleteRule: deleteRule)
        relationship.keyPath = metadata.keypath
        relationship.inverseKeyPath = options?.inverseKeyPath
        if toMany {
            relationship.minCount = max(0, options?.minimumModelCount ?? 0)
            relationship.maxCount = max(0, options?.maximumModelCount ?? 0)
        }
        relationship.renamingIdentifier = options?.originalName
        relationship.versionHashModifier = options?.hashModifier
        return relationship
    }
}

/// `Optional`, seen through its wrapped type (to tell `Stop?` from `Stop` at run time).
protocol _OptionalValue {
    static var wrappedType: Any.Type { get }
    /// The payload, or nil.
    var wrappedAny: Any? { get }
}

extension Optional: _OptionalValue {
    static var wrappedType: Any.Type { Wrapped.self }
    var wrappedAny: Any? { map { $0 as Any } }
}

/// `Array`, seen through its element type (to tell a to-many relationship at run time).
protocol _ArrayValue {
    static var elementType: Any.Type { get }
}

extension Array: _ArrayValue {
    static var elementType: Any.Type { Element.self }
}
