import Foundation

/// An attribute of an entity. Mirrors `NSAttributeDescription`.
///
/// ```swift
/// let title = AttributeDescription(name: "title", type: .string, isOptional: false, defaultValue: "")
/// ```
// @unchecked Sendable: as for PropertyDescription, mutated only before the model freezes.
public final class AttributeDescription: PropertyDescription, @unchecked Sendable {
    /// The attribute's type.
    public var attributeType: AttributeType {
        didSet {
            checkMutable()
            // The default follows the type (it may have been set first).
            let previous = hasType ? storedDefault.anyValue(for: oldValue) : untypedDefault
            hasType = true
            untypedDefault = nil
            storedDefault = ManagedValue(converting: previous, to: attributeType) ?? .null
        }
    }
    /// False for an attribute made with ``init()`` until its type is set (Core Data's
    /// undefined type): the model refuses it when it freezes.
    package private(set) var hasType = true
    /// A default set before the type, kept as given until the type is known.
    private var untypedDefault: Any?
    /// The value a new object starts with (`nil` for none). Must fit ``attributeType``.
    public var defaultValue: Any? {
        get { hasType ? storedDefault.anyValue(for: attributeType) : untypedDefault }
        set {
            checkMutable()
            if hasType { storedDefault = ManagedValue(converting: newValue, to: attributeType) ?? .null } else { untypedDefault = newValue }
        }
    }
    /// Whether the store keeps an index on this attribute.
    public var isIndexed: Bool = false { didSet { checkMutable() } }
    /// Whether large binary values may be stored outside the table (recorded; the SQLite store
    /// keeps them inline).
    public var allowsExternalBinaryDataStorage: Bool = false { didSet { checkMutable() } }
    /// Whether persistent history keeps this value in the tombstone of a deleted object.
    public var preservesValueInHistoryOnDeletion: Bool = false { didSet { checkMutable() } }

    // The validation rules below are read without a run-time access record, as the entity's
    // `isAbstract` is: set while the model is built, by one thread, then only read once it is
    // frozen (a change then traps); every saved object paid a record per rule read.
    /// The smallest valid value (numbers) or length (strings); `nil` for no bound. Checked at
    /// save (1620, 1670).
    @exclusivity(unchecked) public var minimum: Double? { didSet { checkMutable() } }
    /// The largest valid value (numbers) or length (strings); `nil` for no bound (1610, 1660).
    @exclusivity(unchecked) public var maximum: Double? { didSet { checkMutable() } }
    /// The earliest valid date (1640).
    @exclusivity(unchecked) public var earliestDate: Date? { didSet { checkMutable() } }
    /// The latest valid date (1630).
    @exclusivity(unchecked) public var latestDate: Date? { didSet { checkMutable() } }
    /// A regular expression the whole string must match (1680).
    @exclusivity(unchecked) public var regularExpression: String? { didSet { checkMutable() } }

    /// The name of the value transformer of a Transformable attribute (recorded; the archived
    /// bytes are read and written as `Data`).
    public var valueTransformerName: String? { didSet { checkMutable() } }

    /// For a derived attribute (`NSDerivedAttributeDescription`): its expression in predicate
    /// format (`count:(pages)`). Core Data keeps the column current with triggers; here the stored
    /// value is read as is and not recomputed (see DEVIATIONS.md).
    public var derivationExpression: String? { didSet { checkMutable() } }

    /// Whether Xcode's generated class declares the number as a Swift scalar (`Int16`) rather
    /// than `NSNumber?` (`usesScalarValueType` in a model file; `nil` elsewhere). Read by
    /// `ocd codegen` only.
    package var usesScalarValueType: Bool?

    /// The default in stored form.
    package var storedDefault: ManagedValue = .null
    /// The key path of the `@Managed` property this attribute stands for.
    package var keyPath: AnyKeyPath?

    /// The Objective-C value class Core Data records for the type (`NSNumber`, `NSString`, …).
    public var attributeValueClassName: String {
        switch attributeType {
        case .integer16, .integer32, .integer64, .double, .float, .boolean: "NSNumber"
        case .decimal: "NSDecimalNumber"
        case .string: "NSString"
        case .date: "NSDate"
        case .binaryData: "NSData"
        case .uuid: "NSUUID"
        case .uri: "NSURL"
        case .objectID: "NSManagedObjectID"
        case .transformable: "NSData"
        }
    }

    /// Makes an attribute description.
    public init(name: String, type: AttributeType, isOptional: Bool = true, defaultValue: Any? = nil) {
        self.attributeType = type
        super.init(name: name)
        self.isOptional = isOptional
        self.storedDefault = ManagedValue(converting: defaultValue, to: type) ?? .null
    }

    /// Makes an attribute without a name or type yet, as Core Data's `init()` does: set
    /// ``PropertyDescription/name`` and ``attributeType`` before the model is used (a model with
    /// an attribute whose type was never set is refused, as Core Data refuses an undefined type
    /// on a stored attribute).
    public convenience init() {
        self.init(name: "", type: .string)
        hasType = false
    }

    /// Core Data's attribute version hash: base hash, type, storage flags. A derived attribute
    /// hashes its expression only (its name and type do not count, as in Core Data).
    public override var versionHash: Data {
        if let derivationExpression { return Data(SHA256.hash(Array(derivationExpression.utf8))) }
        var bytes = baseVersionHash
        let type = UInt32(attributeType.rawValue)
        bytes += [UInt8(type & 0xff), UInt8((type >> 8) & 0xff), UInt8((type >> 16) & 0xff), UInt8(type >> 24)]
        if allowsExternalBinaryDataStorage { bytes.append(1) }
        if preservesValueInHistoryOnDeletion { bytes.append(1) }
        return Data(SHA256.hash(bytes))
    }
}
