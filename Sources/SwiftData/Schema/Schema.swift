import OpenCoreDataCore

/// The models a container stores: one entity per model class, as SwiftData's `Schema`.
///
/// ```swift
/// let schema = Schema([Trip.self, Stop.self])
/// let container = try ModelContainer(for: schema, configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
/// ```
/// The entities are built from each class's `schemaMetadata` when the container opens; a
/// property whose type cannot be stored makes `ModelContainer(for:)` throw naming it.
public final class Schema: @unchecked Sendable {
    // @unchecked: the stored properties are an immutable array of metatypes and a value, set in
    // `init`.
    /// The model classes, in the order given.
    public let types: [any PersistentModel.Type]
    /// The schema's version (1.0.0 unless given).
    public let version: Version

    /// A schema of these model classes and of the classes their relationships reach (as
    /// SwiftData infers them: `Schema([Trip.self])` includes `Stop` when a trip has stops).
    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        self.version = version
        var seen = Set<ObjectIdentifier>()
        var found: [any PersistentModel.Type] = []
        var waiting = types
        while !waiting.isEmpty {
            let type = waiting.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            found.append(type)
            waiting += type.schemaMetadata.compactMap { Self.destination(of: Swift.type(of: $0.keypath).valueType) }
        }
        self.types = found
    }

    /// The model class of each entity.
    var typesByEntityName: [String: any PersistentModel.Type] {
        Dictionary(types.map { (Self.entityName(for: $0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The model class a property's type refers to: `Stop`, `Stop?`, `[Stop]`, `[Stop]?`.
    static func destination(of valueType: Any.Type) -> (any PersistentModel.Type)? {
        let unwrapped = (valueType as? any _OptionalValue.Type)?.wrappedType ?? valueType
        if let model = unwrapped as? any PersistentModel.Type { return model }
        return (unwrapped as? any _ArrayValue.Type)?.elementType as? any PersistentModel.Type
    }

    /// A schema of these model classes.
    public convenience init(_ types: any PersistentModel.Type...) {
        self.init(types)
    }

    /// The entity name of a model class: the class's name, as SwiftData names it.
    public static func entityName(for type: any PersistentModel.Type) -> String {
        String(describing: type)
    }

    /// One persisted property of a model class, as `@Model` records it.
    public struct PropertyMetadata: @unchecked Sendable {
        // @unchecked: `keypath` and `defaultValue` are immutable values the macro writes (a key
        // path is an immutable object; the default is the property's initial value, a value type
        // of a persisted property), read only to build entity descriptions.
        /// The property's name.
        public let name: String
        /// The key path of the property (its type says what is stored).
        public let keypath: AnyKeyPath
        /// The property's initial value, when it has one.
        public let defaultValue: Any?
        /// The property's `@Attribute` or `@Relationship` options.
        public let metadata: Any?

        /// Records a persisted property.
        public init(name: String, keypath: AnyKeyPath, defaultValue: Any? = nil, metadata: Any? = nil) {
            self.name = name
            self.keypath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
        }
    }

    /// The options of `@Attribute(…)`.
    public struct Attribute: Sendable {
        /// What an attribute may be asked to be.
        public struct Option: Sendable, Hashable {
            enum Kind: Sendable, Hashable {
                case unique, externalStorage, ephemeral, preserveValueOnDeletion, spotlight, allowsCloudEncryption
                case transformable(String)
            }
            let kind: Kind

            /// The value is unique among the entity's models: inserting a model with a value
            /// another has updates that one (a uniqueness constraint, merged by property).
            public static let unique = Option(kind: .unique)
            /// Large binary values may be stored beside the store rather than in it (recorded in
            /// the model; this store keeps them in the table).
            public static let externalStorage = Option(kind: .externalStorage)
            /// Kept in memory and never stored (a transient attribute).
            public static let ephemeral = Option(kind: .ephemeral)
            /// Persistent history keeps the value of a deleted model.
            public static let preserveValueOnDeletion = Option(kind: .preserveValueOnDeletion)
            /// Indexed by Spotlight on Apple platforms; recorded only.
            public static let spotlight = Option(kind: .spotlight)
            /// Encrypted in CloudKit on Apple platforms; recorded only (no sync here).
            public static let allowsCloudEncryption = Option(kind: .allowsCloudEncryption)
            /// Stored through the value transformer registered under `name`
            /// (`ValueTransformers.register`): a property of any type.
            public static func transformable(by name: String) -> Option { Option(kind: .transformable(name)) }
        }

        /// The options.
        public let options: [Option]
        /// The attribute's name in the previous version of the schema (a rename).
        public let originalName: String?
        /// The attribute's version hash modifier.
        public let hashModifier: String?

        /// The options of one attribute.
        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.options = options
            self.originalName = originalName
            self.hashModifier = hashModifier
        }
    }

    /// The options of `@Relationship(…)`.
    public struct Relationship: @unchecked Sendable {
        // @unchecked: `inverseKeyPath` is a key path (an immutable object); the rest are values.
        /// What happens to the destinations when a model is deleted.
        public enum DeleteRule: Sendable, Hashable {
            /// Nothing: the destinations keep pointing at the deleted model.
            case noAction
            /// The destinations forget the deleted model (the default).
            case nullify
            /// The destinations are deleted too.
            case cascade
            /// The save fails while the relationship has destinations.
            case deny
        }

        /// What a relationship may be asked to be.
        public struct Option: Sendable, Hashable {
            let name: String
            /// The destination is unique (recorded; SwiftData's option for to-one relationships
            /// in a uniqueness constraint).
            public static let unique = Option(name: "unique")
        }

        /// The options.
        public let options: [Option]
        /// The delete rule.
        public let deleteRule: DeleteRule
        /// The fewest destinations a to-many relationship may hold (0: no minimum).
        public let minimumModelCount: Int?
        /// The most destinations a to-many relationship may hold (0: no limit).
        public let maximumModelCount: Int?
        /// The relationship's name in the previous version of the schema.
        public let originalName: String?
        /// The inverse relationship, on the destination.
        public let inverseKeyPath: AnyKeyPath?
        /// The relationship's version hash modifier.
        public let hashModifier: String?

        /// The options of one relationship.
        public init(_ options: Option..., deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0,
                    maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil,
                    hashModifier: String? = nil) {
            self.options = options
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.originalName = originalName
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
        }
    }
}
