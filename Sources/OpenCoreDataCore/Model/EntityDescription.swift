import Foundation

/// An entity: a kind of managed object, with its properties. Mirrors `NSEntityDescription`.
///
/// `@Managed` classes make theirs; models built at run time make them by hand:
/// ```swift
/// let note = EntityDescription(name: "Note", properties: [
///     AttributeDescription(name: "id", type: .integer32, isOptional: false, defaultValue: 0),
///     AttributeDescription(name: "text1", type: .string),
/// ])
/// let model = ManagedObjectModel(entities: [note])
/// ```
// @unchecked Sendable: stored properties are written only while the model is built; once a
// coordinator uses the model it is frozen (`isFrozen`) and every mutator traps.
public final class EntityDescription: @unchecked Sendable, CustomStringConvertible, Hashable {
    /// The entity's name (`Note`).
    public var name: String { didSet { checkMutable() } }
    /// The name of the class that represents objects of this entity.
    public var managedObjectClassName: String { didSet { checkMutable() } }
    /// Whether the entity has no instances of its own (only sub-entities do).
    // Unchecked exclusivity (here and for `managedObjectClass`): set while the model is built, by
    // one thread, and only read once it is frozen (a change then traps); every object made paid
    // a run-time access record to read them.
    @exclusivity(unchecked) public var isAbstract: Bool = false { didSet { checkMutable() } }
    /// Changes the version hash without changing the entity, as in Core Data.
    public var versionHashModifier: String? { didSet { checkMutable() } }
    /// The name of the entity in an earlier model version (for migration).
    public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Uniqueness constraints: each inner array lists the property names that together are unique.
    public var uniquenessConstraints: [[String]] = [] { didSet { checkMutable() } }
    /// Application data attached to the entity.
    public var userInfo: [String: String] = [:] { didSet { checkMutable() } }
    /// Named indexes (`fetchIndex` in Xcode's editor); an indexed attribute gets one of its own.
    public var indexes: [FetchIndexDescription] = [] { didSet { checkMutable() } }

    /// The properties, in declaration order.
    public var properties: [PropertyDescription] {
        didSet {
            checkMutable()
            adopt(properties)
        }
    }

    /// The class instantiated for objects of this entity.
    @exclusivity(unchecked) public var managedObjectClass: ManagedObject.Type { didSet { checkMutable() } }

    /// The model this entity belongs to.
    public internal(set) weak var managedObjectModel: ManagedObjectModel?
    /// The entity this one inherits from (set through the parent's ``subentities``).
    // unowned, not weak: see PropertyDescription.entity.
    public internal(set) unowned(safe) var superentity: EntityDescription?
    /// Entities that inherit from this one: they have this entity's properties plus their own,
    /// live in the same table, and fetches of this entity return them too. Setting it sets each
    /// sub-entity's ``superentity``.
    public var subentities: [EntityDescription] = [] {
        didSet {
            checkMutable()
            for sub in oldValue where sub.superentity === self { sub.superentity = nil }
            for sub in subentities { sub.superentity = self }
        }
    }
    /// For `@Managed` subclasses of another `@Managed` class: that class, whose entity becomes
    /// this entity's superentity when both are in a model.
    public var superentityClass: ManagedObject.Type? { didSet { checkMutable() } }


    // Built when the model freezes. Unchecked exclusivity (this block and `frozenRoot`): written
    // once while the model freezes, by one thread, then only read; checked, every read paid a
    // run-time access record (a large part of each save's and fetch's cost).
    @exclusivity(unchecked) package private(set) var isFrozen = false
    /// The stored (non-transient) attributes, in slot order: an object's values and a row's
    /// columns are arrays in this order.
    @exclusivity(unchecked) package private(set) var storedAttributes: [AttributeDescription] = []
    /// Whether some stored attribute is derived: the store's triggers change its rows after a
    /// save wrote them, so what the save wrote is not the row (set at freeze).
    @exclusivity(unchecked) package private(set) var hasDerivedAttributes = false
    /// The derived attributes computed when an object is saved (all but counts, which the store
    /// keeps), by slot (set at freeze).
    @exclusivity(unchecked) package private(set) var savedDerivations: [(slot: Int, derivation: Derivation)] = []
    @exclusivity(unchecked) package private(set) var slotByName: [String: Int] = [:]
    /// The names of the value slots (attributes, then to-one relationships), for the accessors'
    /// fast path.
    @exclusivity(unchecked) package private(set) var storedAttributeNames: [String] = []
    /// Core Data's entity number (`Z_ENT`), assigned by the model.
    @exclusivity(unchecked) package internal(set) var entityNumber: Int = 0
    @exclusivity(unchecked) package private(set) var attributesByNameCache: [String: AttributeDescription] = [:]
    /// To-one relationships (inherited first): their destination's ID is stored in the value
    /// slot `storedAttributes.count + i`.
    @exclusivity(unchecked) package private(set) var toOneRelationships: [RelationshipDescription] = []
    /// To-many relationships (inherited first), in the order of an object's to-many states.
    @exclusivity(unchecked) package private(set) var toManyRelationships: [RelationshipDescription] = []
    /// Value slot of each to-one, by name.
    @exclusivity(unchecked) package private(set) var toOneSlotByName: [String: Int] = [:]
    /// Index of each to-many among `toManyRelationships`, by name.
    @exclusivity(unchecked) package private(set) var toManyIndexByName: [String: Int] = [:]
    @exclusivity(unchecked) private var relationshipsByNameCache: [String: RelationshipDescription] = [:]
    /// Attributes plus to-one relationships: the length of an object's `values`.
    @exclusivity(unchecked) package private(set) var valueSlotCount = 0
    /// The attribute slots with a validation rule (mandatory, bounds, pattern), and those whose
    /// type can hold NaN (which saves refuse).
    @exclusivity(unchecked) package private(set) var validatedSlots: [Int] = []
    /// Whether some relationship has a rule checked at save (mandatory, counts).
    @exclusivity(unchecked) package private(set) var hasRelationshipRules = false
    /// The relationships (to-one, then to-many) whose delete rule does something when an object
    /// is deleted (nullify, cascade), and those whose rule can refuse the delete (deny): made
    /// once, so that deleting an object of an entity without such rules builds no list.
    @exclusivity(unchecked) package private(set) var propagatingRelationships: [RelationshipDescription] = []
    @exclusivity(unchecked) package private(set) var denyingRelationships: [RelationshipDescription] = []
    /// The attributes whose values a delete keeps in history (`ZTOMBSTONE<n>`), in name order.
    @exclusivity(unchecked) package private(set) var tombstoneAttributes: [AttributeDescription] = []

    /// Makes an entity description.
    public init(name: String, managedObjectClass: ManagedObject.Type = ManagedObject.self, properties: [PropertyDescription] = []) {
        self.name = name
        self.managedObjectClass = managedObjectClass
        self.managedObjectClassName = managedObjectClass == ManagedObject.self ? "NSManagedObject" : String(describing: managedObjectClass)
        self.properties = properties
        adopt(properties)
    }

    /// Makes an entity without a name yet, as Core Data's `init()` does: set ``name``,
    /// ``properties`` and ``managedObjectClassName`` (a class found by name when the model is
    /// used, as `NSStringFromClass(Note.self)` or `"Note"` name it) before the model is used.
    public convenience init() {
        self.init(name: "")
    }

    private func adopt(_ properties: [PropertyDescription]) {
        for property in properties { property.entity = self }
    }

    package func checkMutable() {
        if isFrozen {
            preconditionFailure("""
                The entity '\(name)' cannot be changed: its model is in use by a persistent store coordinator. \
                Build a new model instead.
                """)
        }
    }

    /// The properties by name.
    public var propertiesByName: [String: PropertyDescription] {
        Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The attributes by name.
    public var attributesByName: [String: AttributeDescription] {
        if isFrozen { return attributesByNameCache }
        return Dictionary(properties.compactMap { $0 as? AttributeDescription }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The relationships by name, inherited ones included.
    public var relationshipsByName: [String: RelationshipDescription] {
        if isFrozen { return relationshipsByNameCache }
        return Dictionary(allProperties.compactMap { $0 as? RelationshipDescription }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether this entity or one of its sub-entities has relationships (batch deletes then
    /// apply delete rules).
    package var hasRelationshipsInHierarchy: Bool {
        !relationshipsByName.isEmpty || subentities.contains { $0.hasRelationshipsInHierarchy }
    }

    /// Whether `entity` is this entity or one of its sub-entities (at any depth).
    public func isKindOf(entity: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The uniqueness constraint batch inserts upsert on, with the entity that declares it: this
    /// entity's first, else its nearest superentity's (a sub-entity is held to its superentity's
    /// constraints, as the context's check at save and the SQL stores' unique index hold it).
    package var upsertConstraint: (declaringEntity: EntityDescription, properties: [String])? {
        var current: EntityDescription? = self
        while let entity = current {
            if let constraint = entity.uniquenessConstraints.first(where: { !$0.isEmpty }) { return (entity, constraint) }
            current = entity.superentity
        }
        return nil
    }

    /// The root of this entity's inheritance tree (itself when it has no superentity).
    public var rootEntity: EntityDescription {
        if isFrozen, let frozenRoot { return frozenRoot }
        return superentity?.rootEntity ?? self
    }
    // Set at freeze. Unowned (the root holds its sub-entities: a strong reference back would be a
    // cycle), and checked: an object ID kept after its model is gone traps with a clear message
    // instead of reading freed memory.
    @exclusivity(unchecked) private unowned(safe) var frozenRoot: EntityDescription?
    @exclusivity(unchecked) private var frozenRootIdentity: ObjectIdentifier?

    /// The identity of ``rootEntity``, without a reference to it (reading the unowned root costs
    /// a strong retain and release; hashing an object ID needs only its identity).
    package var rootIdentity: ObjectIdentifier {
        if isFrozen, let frozenRootIdentity { return frozenRootIdentity }
        return ObjectIdentifier(rootEntity)
    }
    /// The values a new object starts with, in slot order (shared by every new object). Built when
    /// the model freezes, like the block above (unchecked exclusivity for the same reason: read
    /// for every object made).
    @exclusivity(unchecked) package private(set) var defaultValues: [ManagedValue] = []

    /// Core Data's entity version hash (SHA-256): name, abstract flag, superentity hash, the
    /// hashes of the stored properties in name order, modifier, uniqueness constraints.
    public var versionHash: Data {
        var bytes = Array(name.utf8)
        bytes.append(isAbstract ? 1 : 0)
        if let superentity { bytes += Array(superentity.versionHash) }
        let hashed = allProperties.filter { !$0.isTransient }
            .sorted { Array($0.name.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.name.unicodeScalars.map(\.value)) }
        for property in hashed { bytes += Array(property.versionHash) }
        if let versionHashModifier { bytes += Array(versionHashModifier.utf8) }
        let constraints = uniquenessConstraints.map { $0.joined(separator: ".") }.filter { !$0.isEmpty }.sorted()
        for constraint in constraints { bytes += Array(constraint.utf8) }
        return Data(SHA256.hash(bytes))
    }

    /// The indexes the store makes for this entity's own properties: its fetch indexes, plus one
    /// named after each indexed stored attribute that has none of that name (Core Data adds
    /// those when it loads a model).
    package var fetchIndexesWithIndexedAttributes: [FetchIndexDescription] {
        var result = indexes
        for attribute in properties.compactMap({ $0 as? AttributeDescription })
        where attribute.isIndexed && !attribute.isTransient && !result.contains(where: { $0.name == attribute.name }) {
            result.append(FetchIndexDescription(name: attribute.name, elements: [.init(property: attribute.name)]))
        }
        return result
    }

    /// Inherited properties first, then this entity's own.
    package var allProperties: [PropertyDescription] {
        (superentity?.allProperties ?? []) + properties
    }

    /// The value slot of an attribute or a to-one relationship, by name.
    package func valueSlot(named name: String) -> Int? {
        slotByName[name] ?? toOneSlotByName[name]
    }

    /// The values of named properties in a values array of this entity (`.null` for unknown names).
    package func values(named names: [String], in values: [ManagedValue]) -> [ManagedValue] {
        names.map { name in valueSlot(named: name).map { values[$0] } ?? .null }
    }

    /// A transient attribute by name (one without a value slot: models read from a file keep
    /// transient values in the object's `transientValues`).
    package func transientAttribute(named name: String) -> AttributeDescription? {
        allProperties.first { $0.name == name && $0.isTransient } as? AttributeDescription
    }

    /// Finds the attribute slot of a key, or throws an error naming the entity's attributes.
    package func slot(forKey key: String) throws(CoreDataError) -> Int {
        if let slot = slotByName[key] { return slot }
        let known = storedAttributes.map(\.name).joined(separator: ", ")
        throw CoreDataError(.coreData, "The entity \(name) has no attribute named '\(key)'. Its attributes are: \(known).", key: key)
    }

    /// The name that a typed key path of a `@Managed` class stands for.
    package func name(for keyPath: AnyKeyPath) -> String? {
        allProperties.first { property in
            if let attribute = property as? AttributeDescription { return attribute.keyPath == keyPath }
            if let relationship = property as? RelationshipDescription { return relationship.keyPath == keyPath }
            return false
        }?.name
    }

    package func freeze() {
        guard !isFrozen else { return }
        storedAttributes = allProperties.compactMap { $0 as? AttributeDescription }.filter { !$0.isTransient }
        hasDerivedAttributes = storedAttributes.contains { $0.derivationExpression != nil }
        savedDerivations = storedAttributes.enumerated().compactMap { slot, attribute in
            guard let derivation = attribute.derivation, derivation.isComputable(for: attribute, of: self) else { return nil }
            if case .count = derivation { return nil }
            return (slot, derivation)
        }
        slotByName = Dictionary(storedAttributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let relationships = allProperties.compactMap { $0 as? RelationshipDescription }.filter { !$0.isTransient }
        toOneRelationships = relationships.filter { !$0.isToMany }
        toManyRelationships = relationships.filter(\.isToMany)
        propagatingRelationships = (toOneRelationships + toManyRelationships).filter { $0.deleteRule == .nullify || $0.deleteRule == .cascade }
        denyingRelationships = (toOneRelationships + toManyRelationships).filter { $0.deleteRule == .deny }
        toOneSlotByName = Dictionary(toOneRelationships.enumerated().map { ($1.name, storedAttributes.count + $0) },
                                     uniquingKeysWith: { first, _ in first })
        toManyIndexByName = Dictionary(toManyRelationships.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        relationshipsByNameCache = relationshipsByName
        valueSlotCount = storedAttributes.count + toOneRelationships.count
        storedAttributeNames = storedAttributes.map(\.name) + toOneRelationships.map(\.name)
        attributesByNameCache = attributesByName
        defaultValues = storedAttributes.map(\.storedDefault) + toOneRelationships.map { _ in .null }
        validatedSlots = storedAttributes.indices.filter { slot in
            let a = storedAttributes[slot]
            return !a.isOptional || a.attributeType.canHoldNaN || a.minimum != nil || a.maximum != nil || a.earliestDate != nil
                || a.latestDate != nil || a.regularExpression != nil
        }
        tombstoneAttributes = storedAttributes.filter(\.preservesValueInHistoryOnDeletion).sorted { $0.name < $1.name }
        hasRelationshipRules = toOneRelationships.contains { !$0.isOptional }
            || toManyRelationships.contains { $0.minCount > 0 || $0.upperBound != nil || !$0.isOptional }
        frozenRoot = superentity?.rootEntity ?? self
        frozenRootIdentity = ObjectIdentifier(superentity?.rootEntity ?? self)
        isFrozen = true
    }

    public var description: String {
        "EntityDescription(\(name): " + properties.map(\.name).joined(separator: ", ") + ")"
    }

    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
