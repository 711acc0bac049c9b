import Foundation

/// Core Data's name for ``RelationshipDescription``.
public typealias NSRelationshipDescription = RelationshipDescription
/// Core Data's name for ``DeleteRule``.
public typealias NSDeleteRule = DeleteRule

// Core Data's case names, for models built in code as libraries and test suites write them
// (`attribute.attributeType = .stringAttributeType`).
extension AttributeType {
    /// ``integer16``.
    public static let integer16AttributeType = Self.integer16
    /// ``integer32``.
    public static let integer32AttributeType = Self.integer32
    /// ``integer64``.
    public static let integer64AttributeType = Self.integer64
    /// ``decimal``.
    public static let decimalAttributeType = Self.decimal
    /// ``double``.
    public static let doubleAttributeType = Self.double
    /// ``float``.
    public static let floatAttributeType = Self.float
    /// ``string``.
    public static let stringAttributeType = Self.string
    /// ``boolean``.
    public static let booleanAttributeType = Self.boolean
    /// ``date``.
    public static let dateAttributeType = Self.date
    /// ``binaryData``.
    public static let binaryDataAttributeType = Self.binaryData
    /// ``uuid``.
    public static let UUIDAttributeType = Self.uuid
    /// ``uri``.
    public static let URIAttributeType = Self.uri
    /// ``transformable``.
    public static let transformableAttributeType = Self.transformable
    /// ``objectID``.
    public static let objectIDAttributeType = Self.objectID
}

extension DeleteRule {
    /// ``noAction``.
    public static let noActionDeleteRule = Self.noAction
    /// ``nullify``.
    public static let nullifyDeleteRule = Self.nullify
    /// ``cascade``.
    public static let cascadeDeleteRule = Self.cascade
    /// ``deny``.
    public static let denyDeleteRule = Self.deny
}
