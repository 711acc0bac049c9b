import Foundation

/// A set of entities: the schema of a store. Mirrors `NSManagedObjectModel`.
///
/// ```swift
/// let model = ManagedObjectModel(Note.self, Folder.self)   // from @Managed classes
/// let model = ManagedObjectModel(entities: [noteEntity])     // built at run time
/// ```
///
/// A model is mutable until a persistent store coordinator uses it; from then on it is frozen.
// @unchecked Sendable: `entities` is written only before freezing (checked); afterwards the
// model and its entities are read-only.
public final class ManagedObjectModel: @unchecked Sendable, CustomStringConvertible {
    /// The entities of the model.
    public var entities: [EntityDescription] {
        didSet {
            precondition(!isFrozen, "This model is in use by a persistent store coordinator and cannot be changed.")
            adopt()
        }
    }
    /// Version identifiers (`NSStoreModelVersionIdentifiers`); empty for models built in code.
    public var versionIdentifiers: Set<String> = []
    /// Stored fetch requests by name (see ``fetchRequestFromTemplate(withName:substitutionVariables:)``).
    public var fetchRequestTemplatesByName: [String: FetchRequestTemplate] = [:]
    /// Named subsets of the entities (Xcode's configurations): configuration name → entity names.
    public var configurations: [String: [String]] = [:]
    /// What a model file held that is not supported yet (composite and derived attributes,
    /// fetched properties), one line each; empty for models built in code.
    public internal(set) var unsupportedFeatures: [String] = []

    // Unchecked exclusivity (here and for `byClass`): written once under the freeze lock before
    // any context uses the model, then only read.
    @exclusivity(unchecked) package private(set) var isFrozen = false
    /// Whether some entity has a uniqueness constraint (saves check them only then).
    package private(set) var hasUniquenessConstraints = false
    /// Whether some entity has derived attributes computed at save (set at freeze).
    package private(set) var hasSavedDerivations = false
    private var byName: [String: EntityDescription] = [:]
    @exclusivity(unchecked) private var byClass: [ObjectIdentifier: EntityDescription] = [:]

    /// Makes a model from entity descriptions.
    public init(entities: [EntityDescription]) {
        self.entities = entities
        adopt()
    }

    /// Makes an empty model, as Core Data's `init()` does: set ``entities`` (and
    /// ``configurations``) before a coordinator uses it.
    public convenience init() {
        self.init(entities: [])
    }

    /// Makes a model from `@Managed` classes.
    public convenience init(_ types: any ManagedEntity.Type...) {
        self.init(types)
    }

    /// Makes a model from `@Managed` classes.
    public convenience init(_ types: [any ManagedEntity.Type]) {
        self.init(entities: types.map { $0.makeEntityDescription() })
    }

    private func adopt() {
        for entity in entities { entity.managedObjectModel = self }
        byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // `@Managed` subclasses name their superentity by class.
        for entity in entities where entity.superentity == nil {
            guard let superclass = entity.superentityClass,
                  let parent = entities.first(where: { $0.managedObjectClass == superclass }) else { continue }
            parent.subentities.append(entity)
        }
    }

    /// The entities by name.
    public var entitiesByName: [String: EntityDescription] { byName }

    /// Each entity's version hash, as stored in a store's metadata (`NSStoreModelVersionHashes`).
    public var entityVersionHashesByName: [String: Data] {
        withInversesConnected { Dictionary(entities.map { ($0.name, $0.versionHash) }, uniquingKeysWith: { first, _ in first }) }
    }

    /// An inverse's name is part of a relationship's hash, and a model built from `@Managed`
    /// classes names an inverse on one side only (a key path) until it is frozen: before then,
    /// `body` runs with the inverses connected as freezing would connect them, and the
    /// relationships are put back as they were afterwards (the model may still change). A model
    /// that cannot be connected is hashed as it is, and refused when it is used.
    private func withInversesConnected<T>(_ body: () -> T) -> T {
        guard !isFrozen else { return body() }
        let relationships = entities.flatMap { entity in entity.properties.compactMap { $0 as? RelationshipDescription } }
        let saved = relationships.map {
            ($0.destinationEntityName, $0.inverseName, $0.assignedDestination, $0.assignedInverse, $0.frozenDestination, $0.frozenInverse)
        }
        try? resolveRelationships()
        defer {
            for (relationship, state) in zip(relationships, saved) {
                (relationship.destinationEntityName, relationship.inverseName, relationship.assignedDestination, relationship.assignedInverse,
                 relationship.frozenDestination, relationship.frozenInverse) = state
            }
        }
        return body()
    }

    /// Makes `entities` the configuration `name` (Xcode's configurations), as Core Data's
    /// `setEntities(_:forConfigurationName:)`; the entities should be in ``entities`` too.
    public func setEntities(_ entities: [EntityDescription], forConfigurationName name: String) {
        precondition(!isFrozen, "This model is in use by a persistent store coordinator and cannot be changed.")
        configurations[name] = entities.map(\.name)
    }

    /// The entities of a configuration; all entities for `nil` or an unknown name (as Core Data's
    /// default configuration).
    public func entities(forConfigurationName name: String?) -> [EntityDescription] {
        guard let name, let names = configurations[name] else { return entities }
        let wanted = Set(names)
        return entities.filter { wanted.contains($0.name) }
    }

    /// Whether a store whose metadata is `metadata` can be opened with the configuration `name`
    /// of this model unchanged: its entities' version hashes equal the store's
    /// `NSStoreModelVersionHashes`. Mirrors Core Data's method of the same name.
    public func isConfiguration(withName name: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard let stored = metadata["NSStoreModelVersionHashes"] as? [String: Data] else { return false }
        let current = withInversesConnected {
            Dictionary(entities(forConfigurationName: name).map { ($0.name, $0.versionHash) }, uniquingKeysWith: { first, _ in first })
        }
        return stored == current
    }

    /// The entity whose objects are instances of `type`, if the model has one.
    public func entity(for type: ManagedObject.Type) -> EntityDescription? {
        if isFrozen { return byClass[ObjectIdentifier(type)] }
        return entities.first { $0.managedObjectClass == type }
    }

    /// Checks the model and freezes it: entity numbers are assigned (Core Data's order:
    /// depth-first over the inheritance forest, siblings in case-insensitive name order).
    package func freeze() throws(CoreDataError) {
        // Several coordinators may add stores with one model at once, on different threads
        // (a model shared as a static): one freezes it, the others wait and find it frozen.
        Self.freezing.lock()
        defer { Self.freezing.unlock() }
        try freezeOnce()
    }

    /// Throws when an entity is its own ancestor: version hashes, inherited properties and entity
    /// numbers all walk superentities, so a model file that makes inheritance a cycle is refused
    /// before anything walks it.
    package func checkInheritance() throws(CoreDataError) {
        for entity in entities {
            var ancestor = entity.superentity, steps = 0
            while let current = ancestor {
                steps += 1
                guard steps <= entities.count, current !== entity else {
                    throw CoreDataError(.coreData, """
                        The entity \(entity.name) inherits from itself (through \(current.name)). Inheritance \
                        must form a tree; check the model file.
                        """)
                }
                guard steps <= Self.maximumInheritanceDepth else {
                    throw CoreDataError(.coreData, """
                        The entity \(entity.name) is more than \(Self.maximumInheritanceDepth) levels below \
                        its root entity, far deeper than any model needs; the model file is damaged or \
                        crafted.
                        """)
                }
                ancestor = current.superentity
            }
            // Each sub-entity listed once, and inheriting from this entity: the lists and the
            // superentities describe one tree (walks go down the lists and up the superentities).
            var listed = Set<ObjectIdentifier>()
            for sub in entity.subentities {
                guard sub.superentity === entity, listed.insert(ObjectIdentifier(sub)).inserted else {
                    throw CoreDataError(.coreData, """
                        The entity \(entity.name) lists \(sub.name) as a sub-entity \
                        \(sub.superentity === entity ? "twice" : "but \(sub.name) inherits from \(sub.superentity?.name ?? "no entity")"). \
                        Inheritance must form a tree; check the model file.
                        """)
                }
            }
        }
    }

    /// How deep inheritance may go: walks of a hierarchy recurse this deep at most.
    package static let maximumInheritanceDepth = 1000

    /// Serialises `freeze()` across threads (models are frozen once, so one lock for all).
    private static let freezing = NSLock()

    private func freezeOnce() throws(CoreDataError) {
        guard !isFrozen else { return }
        // Inheritance cycles first: everything below walks superentities.
        try checkInheritance()
        var seen = Set<String>()
        for entity in entities {
            guard !entity.name.isEmpty else { throw CoreDataError(.coreData, "An entity has an empty name. Give every entity a name.") }
            // Names become table, column and index names in the store: only plain words may.
            try Self.checkName(entity.name, what: "entity")
            for property in entity.properties { try Self.checkName(property.name, what: "property of the entity \(entity.name)",
                                                                   leadingUnderscore: true) }
            for index in entity.indexes { try Self.checkName(index.name, what: "fetch index of the entity \(entity.name)", leadingUnderscore: true) }
            for case let attribute as AttributeDescription in entity.properties {
                guard attribute.hasType else {
                    throw CoreDataError(.coreData, """
                        The attribute '\(attribute.name)' of the entity \(entity.name) has no type. Set its \
                        attributeType before the model is used.
                        """)
                }
                try Self.checkBounds(of: attribute, in: entity)
            }
            guard seen.insert(entity.name).inserted else {
                throw CoreDataError(.coreData, "The model has two entities named '\(entity.name)'. Entity names must be unique.")
            }
            var keys = Set<String>()
            for property in entity.allProperties where !keys.insert(property.name).inserted {
                throw CoreDataError(.coreData, "The entity \(entity.name) has two properties named '\(property.name)'.")
            }
        }
        resolveClassNames()
        try inheritClasses()
        for entity in entities {
            if let superclass = entity.superentityClass, entity.superentity == nil {
                throw CoreDataError(.coreData, """
                    The entity \(entity.name) inherits from \(superclass), which is not in the model. Add \
                    \(superclass).self to the ManagedObjectModel.
                    """)
            }
            if let superentity = entity.superentity, !entities.contains(where: { $0 === superentity }) {
                throw CoreDataError(.coreData, """
                    The entity \(entity.name) inherits from \(superentity.name), which is not in the model. \
                    Add it to the model's entities.
                    """)
            }
        }
        try resolveRelationships()
        let ordered = { (list: [EntityDescription]) in
            list.sorted { $0.name.lowercased() < $1.name.lowercased() || ($0.name.lowercased() == $1.name.lowercased() && $0.name < $1.name) }
        }
        var number = 0
        func visit(_ entity: EntityDescription) {
            number += 1
            entity.entityNumber = number
            for sub in ordered(entity.subentities) { visit(sub) }
        }
        for root in ordered(entities.filter { $0.superentity == nil }) { visit(root) }
        for entity in entities {
            entity.freeze()
            // A class a sub-entity inherited (`inheritClasses`) stays its superentity's.
            if entity.managedObjectClass != ManagedObject.self, entity.managedObjectClass != entity.superentity?.managedObjectClass {
                byClass[ObjectIdentifier(entity.managedObjectClass)] = entity
            }
        }
        hasUniquenessConstraints = entities.contains { !$0.uniquenessConstraints.isEmpty }
        hasSavedDerivations = entities.contains { !$0.savedDerivations.isEmpty }
        isFrozen = true
    }

    /// Throws 134060 unless `name` is a letter followed by letters, digits and underscores
    /// (ASCII), as Xcode's model editor requires. Core Data's further rule on case (entities
    /// upper-case, properties lower-case) is not enforced: models built in code may differ.
    ///
    /// Properties and fetch indexes may also start with underscores: Apple's own frameworks
    /// write such models (macOS's knowledge store has `_CDEntityMetadataKey__bestLanguage`), and
    /// prefixed with `Z` they are plain identifiers all the same (`Z_CDENTITYMETADATAKEY__…`; a
    /// column that would be `Z_PK`, `Z_ENT` or `Z_OPT` gets a number appended, as any duplicate
    /// does). Entities may not: `Z` + `_PRIMARYKEY` or `_METADATA` is one of Core Data's own tables.
    static func checkName(_ name: String, what: String, leadingUnderscore: Bool = false) throws(CoreDataError) {
        let bytes = Array(name.utf8)
        func isLetter(_ byte: UInt8) -> Bool { (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) }
        func isWordByte(_ byte: UInt8) -> Bool { isLetter(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F }
        guard let first = bytes.first, isLetter(first) || (leadingUnderscore && first == 0x5F), bytes.allSatisfy(isWordByte) else {
            let shown = name.count > 60 ? String(name.prefix(60)) + "…" : name
            let rule = leadingUnderscore
                ? "a letter or an underscore followed by letters, digits and underscores"
                : "a letter followed by letters, digits and underscores"
            throw CoreDataError(.coreData, "The \(what) is named '\(shown)', which is not a valid name: use \(rule). Rename it in the model.")
        }
    }

    /// Throws 134060 when a validation bound (`minValueString`/`maxValueString` of a model file)
    /// is not finite, or, for a string's length, not a whole number of characters from 0 to 2^53:
    /// no value could be checked against it (and a length of `1e19` has no `Int`).
    static func checkBounds(of attribute: AttributeDescription, in entity: EntityDescription) throws(CoreDataError) {
        for (bound, what) in [(attribute.minimum, "minimum"), (attribute.maximum, "maximum")] {
            guard let bound else { continue }
            let isLength = attribute.attributeType == .string
            let valid = isLength ? (0...0x1p53).contains(bound) && bound.rounded() == bound : bound.isFinite
            guard valid else {
                let rule = isLength ? "a whole number of characters from 0 to \(1 << 53)" : "a finite number"
                throw CoreDataError(.coreData, """
                    The attribute \(attribute.name) of the entity \(entity.name) has the \(what) \(bound), \
                    which is not \(rule). Correct or remove the bound in the model.
                    """)
            }
        }
    }

    public var description: String {
        "ManagedObjectModel(" + entities.map(\.name).joined(separator: ", ") + ")"
    }
}
