import Foundation

/// What happens to the destination objects when an object is deleted. Mirrors `NSDeleteRule`
/// (same raw values).
public enum DeleteRule: UInt, Sendable, Hashable, CustomStringConvertible {
    /// Nothing: the destinations keep pointing at the deleted object (keep the graph consistent
    /// yourself).
    case noAction = 0
    /// The destinations' inverse relationship forgets the deleted object (the default).
    case nullify = 1
    /// The destinations are deleted too.
    case cascade = 2
    /// The save fails (1600) while the relationship still has destinations.
    case deny = 3

    public var description: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }
}

/// A relationship of an entity: to-one or to-many, with its destination, inverse and delete
/// rule. Mirrors `NSRelationshipDescription`.
///
/// ```swift
/// let memos = RelationshipDescription(name: "memos", destination: "Memo", toMany: true, inverse: "folder", deleteRule: .cascade)
/// let folder = RelationshipDescription(name: "folder", destination: "Folder", inverse: "memos")
/// ```
/// Destination and inverse are named; the model resolves them when a coordinator first uses
/// it (an unknown name is an error then). An inverse declared on one side only is completed on
/// the other.
// @unchecked Sendable: as for PropertyDescription, mutated only before the model freezes.
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    /// The name of the destination entity.
    public var destinationEntityName: String { didSet { checkMutable() } }
    /// The name of the inverse relationship on the destination, if any.
    public var inverseName: String? { didSet { checkMutable() } }
    /// What deleting the source does to the destinations.
    public var deleteRule: DeleteRule = .nullify { didSet { checkMutable() } }
    /// The fewest destinations a valid object has (to-many; 0 for none).
    public var minCount: Int = 0 { didSet { checkMutable() } }
    /// The most destinations a valid object has (0 or -1 for no limit, as Xcode and code-built
    /// models write it). A to-one has 1.
    public var maxCount: Int { didSet { checkMutable() } }
    /// Whether the destinations keep an order (`[T]` instead of `Set<T>`).
    public var isOrdered: Bool = false { didSet { checkMutable() } }

    /// The destination entity. Setting it, as Core Data code does, also sets
    /// ``destinationEntityName``; the model connects the relationship to its destination when it
    /// freezes (a destination that is not in the model is an error then).
    public var destinationEntity: EntityDescription? {
        get { frozenDestination ?? assignedDestination }
        set {
            checkMutable()
            assignedDestination = newValue
            if let newValue { destinationEntityName = newValue.name }
        }
    }
    /// The inverse relationship. Setting it, as Core Data code does, also sets ``inverseName``
    /// (set both sides, or one: the model completes the other when it freezes).
    public var inverseRelationship: RelationshipDescription? {
        get { frozenInverse ?? assignedInverse }
        set {
            checkMutable()
            assignedInverse = newValue
            inverseName = newValue?.name
        }
    }
    /// Set when the model freezes; the model owns the entities, which own their relationships.
    package internal(set) unowned(safe) var frozenDestination: EntityDescription?
    package internal(set) unowned(safe) var frozenInverse: RelationshipDescription?
    /// What code assigned before the model froze, held strongly until then (an entity assigned
    /// here may not be in a model yet); the freeze reads the names from them and lets them go.
    package internal(set) var assignedDestination: EntityDescription?
    package internal(set) var assignedInverse: RelationshipDescription?

    /// The key path of the `@Managed` property this relationship stands for.
    package var keyPath: AnyKeyPath?
    /// The `@Managed` class of the destination, for reading its key paths before the model
    /// connects the relationship (typed predicates are translated when the request is made).
    package var destinationType: (any ManagedEntity.Type)?
    /// The key path of the inverse declared with `@Relationship(inverse:)`, resolved to a name
    /// when the model freezes.
    package var inverseKeyPath: AnyKeyPath?
    /// Makes a relationship description.
    public init(name: String, destination: String, toMany: Bool = false, isOptional: Bool = true,
                inverse: String? = nil, deleteRule: DeleteRule = .nullify, isOrdered: Bool = false) {
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.maxCount = toMany ? 0 : 1
        super.init(name: name)
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.isOrdered = isOrdered
    }

    /// Makes a relationship without a name or destination yet, as Core Data's `init()` does: a
    /// to-many (``maxCount`` 0) until you set `maxCount = 1`. Set ``PropertyDescription/name``,
    /// ``destinationEntity`` and ``inverseRelationship`` before the model is used.
    public convenience init() {
        self.init(name: "", destination: "", toMany: true)
    }

    /// Whether the relationship holds any number of destinations (`maxCount != 1`).
    public var isToMany: Bool { maxCount != 1 }

    /// The limit on destinations, `nil` when unbounded.
    package var upperBound: Int? { maxCount > 0 ? maxCount : nil }

    /// Core Data's relationship version hash: base hash, destination name, inverse name, max and
    /// min count, ordered flag. The delete rule is not hashed.
    public override var versionHash: Data {
        var bytes = baseVersionHash
        bytes += Array(destinationEntityName.utf8)
        if let inverseName, !(inverseName == name && destinationEntityName == entity?.name) { bytes += Array(inverseName.utf8) }
        let maximum = UInt32(truncatingIfNeeded: maxCount)   // as stored: 0 or -1 mean unbounded
        let minimum = UInt32(truncatingIfNeeded: minCount)
        for word in [maximum, minimum] {
            bytes += [UInt8(word & 0xff), UInt8((word >> 8) & 0xff), UInt8((word >> 16) & 0xff), UInt8(word >> 24)]
        }
        if isOrdered { bytes += [1, 0] }
        return Data(SHA256.hash(bytes))
    }
}

extension RelationshipDescription {
    /// The description of a `@Managed` relationship property. Used by the code `@Managed`
    /// generates.
    public static func managed<Root: ManagedObject, Value, Destination: ManagedEntity>(
        _ name: String, _ keyPath: KeyPath<Root, Value>, destination: Destination.Type, toMany: Bool = false, isOrdered: Bool = false,
        isOptional: Bool = true, deleteRule: DeleteRule = .nullify, inverse: AnyKeyPath? = nil, minimumCount: Int = 0, maximumCount: Int = 0,
        hashModifier: String? = nil
    ) -> RelationshipDescription {
        let relationship = RelationshipDescription(name: name, destination: Destination.entityName, toMany: toMany, isOptional: isOptional,
                                                   deleteRule: deleteRule, isOrdered: isOrdered)
        relationship.keyPath = keyPath
        relationship.destinationType = destination
        relationship.inverseKeyPath = inverse
        relationship.minCount = minimumCount
        if toMany { relationship.maxCount = maximumCount }
        relationship.versionHashModifier = hashModifier
        return relationship
    }
}
