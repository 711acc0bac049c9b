import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

/// Migrates a store object by object through a mapping model, running the entity migration
/// policies it names. Mirrors `NSMigrationManager`.
///
/// Loading a store migrates it this way by itself when a mapping model under
/// ``/OpenCoreDataCore/MappingModelsOption`` starts at the store's version and runs app code (a policy or a
/// `FUNCTION(…)` value); pass the policy classes under ``MigrationPolicyTypesOption``. Call
/// ``migrateStore(from:type:options:mapping:to:type:options:)`` to migrate a store into another
/// file yourself, as Core Data apps that migrate step by step do.
///
/// Every source object is read into ``sourceContext`` and every destination object made in
/// ``destinationContext`` before the one save at the end, as in Core Data: memory grows with the
/// store. The migrated store gets a new UUID (its objects have new keys, so object IDs from
/// before must not resolve to other objects) and no history from before.
///
/// A manager is used on one thread at a time: the migration runs on the calling thread, holding
/// the queues of both contexts (policies use them without `perform`).
public final class MigrationManager {
    /// The model of the store migrated from.
    public let sourceModel: ManagedObjectModel
    /// The model migrated to.
    public let destinationModel: ManagedObjectModel
    /// The mapping model being followed (set when a migration starts).
    public private(set) var mappingModel: MappingModel?
    /// The context the source objects are read into (private queue; its coordinator is set while
    /// a migration runs).
    public let sourceContext = ManagedObjectContext(concurrencyType: .privateQueue)
    /// The context the destination objects are made in.
    public let destinationContext = ManagedObjectContext(concurrencyType: .privateQueue)
    /// The entity mapping being followed.
    public private(set) var currentEntityMapping: MappingModel.EntityMapping?
    /// How far the migration is, from 0 to 1.
    public private(set) var migrationProgress: Float = 0
    /// Anything the app wants its policies to share.
    public var userInfo: [AnyHashable: Any]?
    /// The policy classes mappings may name (see ``EntityMigrationPolicy``).
    public var policyTypes: [EntityMigrationPolicy.Type] = []

    /// Per entity mapping name: the destination objects of each source object, and back.
    private var destinationsBySource: [String: [ManagedObjectID: [ManagedObject]]] = [:]
    private var sourcesByDestination: [String: [ObjectIdentifier: [ManagedObject]]] = [:]
    /// Per entity mapping name: its destination objects in the order they were made.
    private var made: [String: [ManagedObject]] = [:]
    private var policies: [String: EntityMigrationPolicy] = [:]
    private var expressions: [String: MappingExpression] = [:]
    private var cancellation: (any Error)?

    /// A manager for migrations from `sourceModel`'s version to `destinationModel`'s.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
    }

    /// Migrates the store at `sourceURL` (opened read-only, unchanged) into the store at
    /// `destinationURL` (created when missing) through `mapping`, whose versions must be the
    /// manager's. Mirrors `migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`.
    /// Throws what a policy throws (other errors wrapped in a ``/OpenCoreDataCore/CoreDataError`` 134110), 134140
    /// for a policy or value expression that cannot be followed, or the destination's validation
    /// errors; the destination is then left without the migrated objects.
    public func migrateStore(from sourceURL: URL, type sourceType: PersistentStore.StoreType = .sqlite,
                             options sourceOptions: [String: any Sendable] = [:],
                             mapping: MappingModel, to destinationURL: URL, type destinationType: PersistentStore.StoreType = .sqlite,
                             options destinationOptions: [String: any Sendable] = [:]) throws {
        try sourceModel.freeze()
        try destinationModel.freeze()
        try mapping.sourceModel.freeze()
        try mapping.destinationModel.freeze()
        guard mapping.sourceModel.entityVersionHashesByName == sourceModel.entityVersionHashesByName,
              mapping.destinationModel.entityVersionHashesByName == destinationModel.entityVersionHashesByName else {
            throw CoreDataError(.migration, """
                The mapping model \(mapping.name) maps other model versions than this migration manager's: \
                make the manager with the mapping's sourceModel and destinationModel.
                """)
        }
        var readOptions = sourceOptions
        readOptions[NSReadOnlyPersistentStoreOption] = true
        readOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let sourceCoordinator = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        try sourceCoordinator.addPersistentStore(type: sourceType, at: sourceURL, options: readOptions)
        defer { for store in sourceCoordinator.persistentStores { try? sourceCoordinator.remove(store) } }
        var writeOptions = destinationOptions
        writeOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let destinationCoordinator = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        try destinationCoordinator.addPersistentStore(type: destinationType, at: destinationURL, options: writeOptions)
        defer { for store in destinationCoordinator.persistentStores { try? destinationCoordinator.remove(store) } }

        try sourceContext.performAndWait {
            try destinationContext.performAndWait {
                sourceContext.persistentStoreCoordinator = sourceCoordinator
                destinationContext.persistentStoreCoordinator = destinationCoordinator
                start(mapping)
                defer {
                    sourceContext.reset()
                    destinationContext.reset()
                    finish()
                }
                try follow(mapping)
            }
        }
    }

    /// Stops the migration under way with `error`, which it throws after the object being
    /// migrated (the store is left as it was). Mirrors `cancelMigrationWithError(_:)`.
    public func cancelMigrationWithError(_ error: any Error) {
        cancellation = error
    }

    // MARK: - Associations

    /// Records that `destination` was made from `source` by `mapping`; the default policy does it
    /// for the objects it makes. Mirrors `associate(sourceInstance:withDestinationInstance:for:)`.
    public func associate(sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
                          for mapping: MappingModel.EntityMapping) {
        destinationsBySource[mapping.name, default: [:]][source.objectID, default: []].append(destination)
        sourcesByDestination[mapping.name, default: [:]][ObjectIdentifier(destination), default: []].append(source)
        made[mapping.name, default: []].append(destination)
    }

    /// The destination objects made from `sourceInstances` by the named mapping (all of them,
    /// in order). Mirrors `destinationInstances(forEntityMappingName:sourceInstances:)`.
    public func destinationInstances(forEntityMappingName name: String, sourceInstances: [ManagedObject]?) -> [ManagedObject] {
        let table = destinationsBySource[name] ?? [:]
        return (sourceInstances ?? []).flatMap { table[$0.objectID] ?? [] }
    }

    /// The source objects the named mapping made `destinationInstances` from. Mirrors
    /// `sourceInstances(forEntityMappingName:destinationInstances:)`.
    public func sourceInstances(forEntityMappingName name: String, destinationInstances: [ManagedObject]?) -> [ManagedObject] {
        let table = sourcesByDestination[name] ?? [:]
        return (destinationInstances ?? []).flatMap { table[ObjectIdentifier($0)] ?? [] }
    }

    /// The source entity of `mapping` in ``sourceModel``. Mirrors `sourceEntity(for:)`.
    public func sourceEntity(for mapping: MappingModel.EntityMapping) -> EntityDescription? {
        mapping.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination entity of `mapping` in ``destinationModel``. Mirrors `destinationEntity(for:)`.
    public func destinationEntity(for mapping: MappingModel.EntityMapping) -> EntityDescription? {
        destinationModel.entitiesByName[mapping.destinationEntityName]
    }

    // MARK: - The stages

    private func start(_ mapping: MappingModel) {
        mappingModel = mapping
        destinationsBySource = [:]
        sourcesByDestination = [:]
        made = [:]
        policies = [:]
        expressions = [:]
        cancellation = nil
        migrationProgress = 0
    }

    private func finish() {
        currentEntityMapping = nil
        sourceContext.persistentStoreCoordinator = nil
        destinationContext.persistentStoreCoordinator = nil
        policies = [:]
    }

    /// Core Data's three stages over every mapping, then the save.
    private func follow(_ mapping: MappingModel) throws {
        let mappings = entityMappings(of: mapping)
        var sources: [String: [ManagedObject]] = [:]
        for entityMapping in mappings {
            sources[entityMapping.name] = try sourceObjects(of: entityMapping)
        }
        let total = Float(max(1, sources.values.reduce(0) { $0 + $1.count } * 2 + mappings.count))
        var done: Float = 0
        func advance() throws {
            done += 1
            migrationProgress = min(1, done / total)
            if let cancellation { throw cancellation }
        }

        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = try policy(for: entityMapping)
            try run(policy, entityMapping, "begin") { try policy.begin(entityMapping, with: self) }
            for source in sources[entityMapping.name] ?? [] {
                try run(policy, entityMapping, "createDestinationInstances") {
                    try policy.createDestinationInstances(forSource: source, in: entityMapping, manager: self)
                }
                try advance()
            }
            try run(policy, entityMapping, "endInstanceCreation") { try policy.endInstanceCreation(forMapping: entityMapping, manager: self) }
        }
        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = try policy(for: entityMapping)
            for destination in made[entityMapping.name] ?? [] {
                try run(policy, entityMapping, "createRelationships") {
                    try policy.createRelationships(forDestination: destination, in: entityMapping, manager: self)
                }
                try advance()
            }
            try run(policy, entityMapping, "endRelationshipCreation") { try policy.endRelationshipCreation(forMapping: entityMapping, manager: self) }
        }
        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = try policy(for: entityMapping)
            try run(policy, entityMapping, "performCustomValidation") { try policy.performCustomValidation(forMapping: entityMapping, manager: self) }
            try run(policy, entityMapping, "end") { try policy.end(entityMapping, manager: self) }
            try advance()
        }
        currentEntityMapping = nil
        do {
            try destinationContext.save()
        } catch let error as CoreDataError {
            throw CoreDataError(error.code, "The migrated objects of \(mapping.name) could not be saved: \(error.message)", key: error.key,
                                affectedObjectIDs: error.affectedObjectIDs)
        }
        migrationProgress = 1
    }

    /// The source objects an entity mapping migrates: those its source expression selects (the
    /// filter predicate Xcode's mapping editor writes into it), else every object of its source
    /// entity, sub-entities aside.
    private func sourceObjects(of mapping: MappingModel.EntityMapping) throws -> [ManagedObject] {
        guard let selection = try mapping.sourceSelection() else {
            guard let entity = sourceEntity(for: mapping) else { return [] }
            let request = FetchRequest<ManagedObject>(entity: entity)
            request.includesSubentities = false
            return try sourceContext.fetch(request)
        }
        guard let entity = sourceModel.entitiesByName[selection.entityName] else {
            throw CoreDataError(.migration, """
                The entity mapping \(mapping.name) selects objects of \(selection.entityName), which the source model \
                has no entity of. Name one of its entities in the mapping's source expression.
                """)
        }
        let request = FetchRequest<ManagedObject>(entity: entity)
        request.includesSubentities = selection.includesSubentities
        request.predicate = FetchPredicate(format: selection.predicateFormat, argumentArray: nil)
        do {
            return try sourceContext.fetch(request)
        } catch let error as CoreDataError {
            throw CoreDataError(error.code, "The filter predicate of the entity mapping \(mapping.name) (\(selection.predicateFormat)) cannot select its source objects: \(error.message)")
        }
    }

    /// The mapping's entity mappings, and for destination entities it lists none for, an
    /// inferred copy from the source entity of the same name (or renaming identifier).
    private func entityMappings(of mapping: MappingModel) -> [MappingModel.EntityMapping] {
        var mappings = mapping.entityMappings
        let listed = Set(mappings.map(\.destinationEntityName))
        for entity in destinationModel.entities.sorted(by: { $0.name < $1.name }) where !listed.contains(entity.name) && !entity.isAbstract {
            if let source = [entity.renamingIdentifier, entity.name].compactMap({ $0 }).first(where: { sourceModel.entitiesByName[$0] != nil }) {
                mappings.append(.init(sourceEntityName: source, destinationEntityName: entity.name))
            }
        }
        return mappings
    }

    /// Runs one policy method; an error that is not a ``/OpenCoreDataCore/CoreDataError`` is wrapped naming where
    /// it came from.
    private func run(_ policy: EntityMigrationPolicy, _ mapping: MappingModel.EntityMapping, _ method: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.migration, """
                \(type(of: policy)).\(method) failed for the entity mapping \(mapping.name) of \
                \(mappingModel?.name ?? "the mapping model"): \(error). The store is left as it was.
                """)
        }
    }

    /// The policy of `mapping` (one instance per mapping).
    private func policy(for mapping: MappingModel.EntityMapping) throws -> EntityMigrationPolicy {
        if let policy = policies[mapping.name] { return policy }
        let policy: EntityMigrationPolicy
        if let name = mapping.migrationPolicyClassName {
            guard let type = Self.policyType(named: name, among: policyTypes) else {
                let bare = name.split(separator: ".").last.map(String.init) ?? name
                throw CoreDataError(.migrationMissingMappingModel, """
                    The entity mapping \(mapping.name) of \(mappingModel?.name ?? "the mapping model") names \
                    the entity migration policy \(name), which is not at hand. Pass the class under \
                    MigrationPolicyTypesOption (or MigrationManager.policyTypes), e.g. [\(bare).self]; it must \
                    subclass EntityMigrationPolicy.
                    """)
            }
            policy = type.init()
        } else {
            policy = EntityMigrationPolicy()
        }
        policies[mapping.name] = policy
        return policy
    }

    /// The policy class a mapping names: among `types` by full name (`Module.Class`) or bare
    /// name, else the Swift runtime's type of a `Module.Class` name.
    static func policyType(named name: String, among types: [EntityMigrationPolicy.Type]) -> EntityMigrationPolicy.Type? {
        let bare = name.split(separator: ".").last.map(String.init) ?? name
        if let type = types.first(where: { String(reflecting: $0) == name }) ?? types.first(where: { String(describing: $0) == bare }) {
            return type
        }
        // Only a dotted identifier reaches the runtime's lookup (the name comes from a file).
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.allSatisfy({ part in
            guard let first = part.unicodeScalars.first, first == "_" || (first.isASCII && CharacterSet.letters.contains(first)) else { return false }
            return part.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || CharacterSet.alphanumerics.contains($0)) }
        }) else { return nil }
        return _typeByName(name) as? EntityMigrationPolicy.Type
    }

    // MARK: - The default policy's work

    /// What ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)`` does by
    /// default: one destination object with the mapped (or same-named) attribute values.
    func makeDestinationInstance(forSource source: ManagedObject, in mapping: MappingModel.EntityMapping) throws {
        guard let entity = destinationEntity(for: mapping) else {
            throw CoreDataError(.migration, """
                The entity mapping \(mapping.name) makes objects of \(mapping.destinationEntityName), which \
                the destination model does not have.
                """)
        }
        guard !entity.isAbstract else {
            throw CoreDataError(.migration, """
                The entity mapping \(mapping.name) makes objects of the abstract entity \(entity.name); map to \
                one of its sub-entities.
                """)
        }
        let destination = entity.managedObjectClass.init(entity: entity, insertInto: destinationContext)
        let sourceAttributes = Set(source.entity.allProperties.compactMap { ($0 as? AttributeDescription).flatMap { $0.isTransient ? nil : $0.name } })
        for attribute in entity.allProperties.compactMap({ $0 as? AttributeDescription })
        where !attribute.isTransient && attribute.derivationExpression == nil {
            let value: Any?
            if let text = mapping.valueExpressions[attribute.name] {
                value = try evaluate(text, for: "\(entity.name).\(attribute.name)", source: source, mapping: mapping)
            } else if let name = [attribute.renamingIdentifier, attribute.name].compactMap({ $0 }).first(where: sourceAttributes.contains) {
                value = try source.validatedValue(forKey: name)
            } else {
                continue
            }
            try destination.setValidatedValue(value, forKey: attribute.name)
        }
        associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }

    /// What ``EntityMigrationPolicy/createRelationships(forDestination:in:manager:)`` does by
    /// default: each relationship from its value expression, or from the destination objects of
    /// the source object's relationship of the same name.
    func makeRelationships(forDestination destination: ManagedObject, in mapping: MappingModel.EntityMapping) throws {
        guard let source = sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [destination]).first else { return }
        let sourceRelationships = source.entity.relationshipsByName
        for relationship in destination.entity.relationshipsByName.values.sorted(by: { $0.name < $1.name }) {
            let targets: [ManagedObject]
            if let text = mapping.valueExpressions[relationship.name] {
                targets = managedObjects(in: try evaluate(text, for: "\(destination.entity.name).\(relationship.name)", source: source,
                                                          mapping: mapping))
            } else if let name = [relationship.renamingIdentifier, relationship.name].compactMap({ $0 }).first(where: { sourceRelationships[$0] != nil }) {
                targets = destinations(of: managedObjects(in: try source.validatedValue(forKey: name)))
            } else {
                continue
            }
            let value: Any? = relationship.isToMany ? (relationship.isOrdered ? targets as Any : Set(targets) as Any) : targets.first
            try destination.setValidatedValue(value, forKey: relationship.name)
        }
    }

    /// The destination objects of source objects, through whichever mapping made them.
    private func destinations(of sources: [ManagedObject]) -> [ManagedObject] {
        let tables = destinationsBySource.sorted { $0.key < $1.key }.map(\.value)
        return sources.flatMap { source in tables.flatMap { $0[source.objectID] ?? [] } }
    }

    // MARK: - Value expressions

    private func evaluate(_ text: String, for what: String, source: ManagedObject, mapping: MappingModel.EntityMapping) throws -> Any? {
        let expression: MappingExpression
        if let parsed = expressions[text] {
            expression = parsed
        } else {
            expression = try MappingExpression(parsing: text, what: "\(what) in \(mapping.name)")
            expressions[text] = expression
        }
        return try evaluate(expression, text: text, what: what, source: source, mapping: mapping)
    }

    private func evaluate(_ expression: MappingExpression, text: String, what: String, source: ManagedObject,
                          mapping: MappingModel.EntityMapping) throws -> Any? {
        switch expression {
        case .constant(let constant):
            return constant.value
        case .variable(let name, let keyPath):
            guard name == "source" else {
                throw MappingExpression.failure("\(what) in \(mapping.name)", text: text,
                                                "$\(name)\(keyPath.map { "." + $0 }.joined()) is not a value (only $source key paths are)")
            }
            return try Self.follow(keyPath, from: source, what: "\(what) in \(mapping.name)", text: text)
        case .function(let target, let selector, let arguments):
            let values = try arguments.map { try evaluate($0, text: text, what: what, source: source, mapping: mapping) }
            switch target {
            case .variable("manager", let path) where path.isEmpty:
                return try managerFunction(selector, values, what: "\(what) in \(mapping.name)", text: text)
            case .variable("entityPolicy", let path) where path.isEmpty:
                do {
                    return try policy(for: mapping).function(selector, arguments: values, manager: self)
                } catch let error as CoreDataError where error.code == .migrationMissingMappingModel {
                    throw CoreDataError(error.code, "The value expression \(text) of \(what) in \(mapping.name) cannot be followed: \(error.message)")
                }
            default:
                throw MappingExpression.failure("\(what) in \(mapping.name)", text: text,
                                                "FUNCTION is called on something other than $manager or $entityPolicy")
            }
        }
    }

    /// The migration manager's functions that mapping models call.
    private func managerFunction(_ selector: String, _ arguments: [Any?], what: String, text: String) throws -> Any? {
        guard arguments.count == 2, let name = arguments[0] as? String else {
            throw MappingExpression.failure(what, text: text, "\(selector) takes a name and the objects")
        }
        let objects = managedObjects(in: arguments[1])
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            return destinationInstances(forEntityMappingName: name, sourceInstances: objects)
        case "sourceInstancesForEntityMappingNamed:destinationInstances:":
            return sourceInstances(forEntityMappingName: name, destinationInstances: objects)
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            return destinations(of: objects)
        default:
            throw MappingExpression.failure(what, text: text, "the migration manager has no function \(selector)")
        }
    }

    /// `keyPath` from `value`: keys of objects (through collections, flattened), `@count`, and
    /// the union operators Xcode writes (`$source.countries.@distinctUnionOfSets.moods`), which
    /// change nothing here: a to-many is set from the objects, without duplicates.
    private static func follow(_ keyPath: [String], from value: Any?, what: String, text: String) throws -> Any? {
        var current = value
        for key in keyPath {
            if key == "@count" {
                current = managedObjects(in: current).count
                continue
            }
            if key.hasPrefix("@") {
                guard key.contains("UnionOf") else {
                    throw MappingExpression.failure(what, text: text, """
                        the key path operator \(key) is not one a migration follows (@count and the union \
                        operators are)
                        """)
                }
                continue
            }
            switch current {
            case let object as ManagedObject:
                current = try object.validatedValue(forKey: key)
            case nil:
                return nil
            default:
                let objects = managedObjects(in: current)
                current = try objects.map { try $0.validatedValue(forKey: key) ?? NSNull() } as [Any]
            }
        }
        return current
    }
}
