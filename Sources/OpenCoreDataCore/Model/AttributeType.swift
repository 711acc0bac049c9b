import Foundation

/// The type of an attribute, with Core Data's raw values (`NSAttributeType`).
public enum AttributeType: UInt, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `Integer 16` (`NSInteger16AttributeType`).
    case integer16 = 100
    /// `Integer 32` (`NSInteger32AttributeType`).
    case integer32 = 200
    /// `Integer 64` (`NSInteger64AttributeType`).
    case integer64 = 300
    /// `Decimal` (`NSDecimalAttributeType`).
    case decimal = 400
    /// `Double` (`NSDoubleAttributeType`).
    case double = 500
    /// `Float` (`NSFloatAttributeType`).
    case float = 600
    /// `String` (`NSStringAttributeType`).
    case string = 700
    /// `Boolean` (`NSBooleanAttributeType`).
    case boolean = 800
    /// `Date` (`NSDateAttributeType`), stored as seconds since 2001-01-01.
    case date = 900
    /// `Binary Data` (`NSBinaryDataAttributeType`).
    case binaryData = 1000
    /// `UUID` (`NSUUIDAttributeType`), stored as 16 bytes.
    case uuid = 1100
    /// `URI` (`NSURIAttributeType`), stored as its absolute string.
    case uri = 1200
    /// `Transformable` (`NSTransformableAttributeType`): a value archived by a value
    /// transformer, stored as bytes. Read and written as its archived `Data` here (value
    /// transformers are not applied yet).
    case transformable = 1800
    /// An object ID (`NSObjectIDAttributeType`): the value slot of a to-one relationship, stored
    /// as the destination's primary key.
    case objectID = 2000

    /// Whether values of this type are numbers (comparable with `<`, usable in arithmetic).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean: true
        default: false
        }
    }

    /// Whether a value of this type can be NaN (floating point, decimal, date), which saves refuse.
    package var canHoldNaN: Bool {
        switch self {
        case .decimal, .double, .float, .date: true
        default: false
        }
    }

    /// Whether values are stored as SQLite integers.
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary Data"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "Object ID"
        }
    }
}
