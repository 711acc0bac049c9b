import Foundation

/// Where a property of the current model takes its values from during a migration.
package enum PropertySource {
    /// The old model's property (same name, or the current renaming identifier).
    case property(PropertyDescription)
    /// A key path from the old object across to-one relationships (`continent.numericISO3166Code`),
    /// from a mapping model.
    case keyPath([String])
    /// A constant, from a mapping model.
    case constant(ManagedValue)
}

/// How the entities and properties of the model a store was written with correspond to those of
/// the current model, inferred as Core Data's lightweight migration does: by name, or by the
/// current element's renaming identifier (its name in the older version) — or as a mapping
/// model says, where one is given.
///
/// Entities and properties without a counterpart are new (empty, or defaults) or dropped. A
/// property that changed between attribute and relationship cannot be inferred.
package struct InferredMapping {
    package let source: ManagedObjectModel
    package let destination: ManagedObjectModel
    /// Source entity of each destination entity.
    private var sourceEntities: [ObjectIdentifier: EntityDescription] = [:]
    /// Destination entity of each source entity.
    private var destinationEntities: [ObjectIdentifier: EntityDescription] = [:]
    /// Per destination entity, the source property of each of its (inherited included) properties.
    private var sourceProperties: [ObjectIdentifier: [String: PropertySource]] = [:]

    package init(source: ManagedObjectModel, destination: ManagedObjectModel, mappingModel: MappingModel? = nil) throws(CoreDataError) {
        self.source = source
        self.destination = destination
        let sourceByName = source.entitiesByName
        let listed = Dictionary((mappingModel?.entityMappings ?? []).map { ($0.destinationEntityName, $0) }, uniquingKeysWith: { first, _ in first })
        if let mappingModel {
            for mapping in mappingModel.entityMappings {
                if let policy = mapping.migrationPolicyClassName {
                    throw CoreDataError(.migrationMissingMappingModel, """
                        The migration step \(mappingModel.name) maps \(mapping.destinationEntityName) with the \
                        entity migration policy \(policy): app code, which a lightweight migration does not \
                        run. Load the store with NSMigratePersistentStoresAutomaticallyOption and the policy \
                        class under MigrationPolicyTypesOption, or migrate it with \
                        MigrationManager.migrateStore.
                        """)
                }
                if mapping.filtersSources {
                    throw CoreDataError(.migrationMissingMappingModel, """
                        The migration step \(mappingModel.name) maps \(mapping.destinationEntityName) from the source \
                        objects \(mapping.sourceExpression ?? "") selects, which a migration in SQL does not filter \
                        by. Migrate the store with MigrationManager.migrateStore (a SQLite store loaded with \
                        NSMigratePersistentStoresAutomaticallyOption does so itself).
                        """)
                }
            }
        }
        for entity in destination.entities {
            let match: EntityDescription?
            if let mapping = listed[entity.name] {
                match = mapping.sourceEntityName.flatMap { sourceByName[$0] }
            } else {
                match = entity.renamingIdentifier.flatMap({ sourceByName[$0] }) ?? sourceByName[entity.name]
            }
            guard let match else { continue }
            sourceEntities[ObjectIdentifier(entity)] = match
            destinationEntities[ObjectIdentifier(match)] = entity
        }
        for entity in destination.entities {
            guard let match = sourceEntities[ObjectIdentifier(entity)] else { continue }
            let candidates = Dictionary(match.allProperties.filter { !$0.isTransient }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var properties: [String: PropertySource] = [:]
            for property in entity.allProperties where !property.isTransient {
                var named = property.renamingIdentifier.flatMap({ candidates[$0] }) ?? candidates[property.name]
                if let expression = listed[entity.name]?.valueExpressions[property.name] {
                    switch try Self.parse(expression, for: property, in: entity, step: mappingModel?.name ?? "") {
                    case .key(let name):
                        named = candidates[name]
                    case .keyPath(let path):
                        properties[property.name] = .keyPath(path)
                        continue
                    case .constant(let value):
                        properties[property.name] = .constant(value)
                        continue
                    }
                }
                guard let counterpart = named else { continue }
                switch (property, counterpart) {
                case (is AttributeDescription, is AttributeDescription):
                    properties[property.name] = .property(counterpart)
                case (let relationship as RelationshipDescription, let old as RelationshipDescription):
                    // Same destination, up to renaming and moves within a hierarchy.
                    guard let oldDestination = old.destinationEntity, let newDestination = relationship.destinationEntity,
                          let mapped = destinationEntities[ObjectIdentifier(oldDestination)],
                          mapped.isKindOf(entity: newDestination) || newDestination.isKindOf(entity: mapped) else { continue }
                    properties[property.name] = .property(counterpart)
                default:
                    throw CoreDataError(.inferredMappingModel, """
                        Cannot infer a mapping for \(entity.name).\(property.name): it is \
                        \(property is AttributeDescription ? "an attribute" : "a relationship") now and was \
                        \(counterpart is AttributeDescription ? "an attribute" : "a relationship") in the \
                        store's model. Give the new property another name (so the old one is dropped) or \
                        migrate the data yourself.
                        """)
                }
            }
            sourceProperties[ObjectIdentifier(entity)] = properties
        }
    }

    /// The destination entity rows of `entity` (a source entity) become; nil when it was removed.
    package func destination(of entity: EntityDescription) -> EntityDescription? {
        destinationEntities[ObjectIdentifier(entity)]
    }

    /// The source entity of a destination entity; nil for a new entity.
    package func source(of entity: EntityDescription) -> EntityDescription? {
        sourceEntities[ObjectIdentifier(entity)]
    }

    /// Where `property` of `entity` (destination) takes its values from.
    package func source(of property: PropertyDescription, in entity: EntityDescription) -> PropertySource? {
        sourceProperties[ObjectIdentifier(entity)]?[property.name]
    }

    /// The old property whose values `property` of `entity` (destination) takes, when it is one.
    package func sourceProperty(of property: PropertyDescription, in entity: EntityDescription) -> PropertyDescription? {
        if case .property(let old)? = source(of: property, in: entity) { old } else { nil }
    }

    /// What a mapping model's value expression asks for: `$source.<key>` (a property),
    /// `$source.<a>.<b>` (a key path, attributes only), a constant; anything else is app code.
    private enum ValueExpression {
        case key(String)
        case keyPath([String])
        case constant(ManagedValue)
    }

    private static func parse(_ expression: String, for property: PropertyDescription, in entity: EntityDescription,
                              step: String) throws(CoreDataError) -> ValueExpression {
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("$source.") {
            let path = text.dropFirst("$source.".count).split(separator: ".").map(String.init)
            if path.count == 1 { return .key(path[0]) }
            if property is AttributeDescription, path.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) {
                return .keyPath(path)
            }
        }
        if let attribute = property as? AttributeDescription {
            let constant: Any? = switch text {
            case "YES", "TRUE", "true": true
            case "NO", "FALSE", "false": false
            case "nil", "NULL": NSNull()
            default: Int64(text) ?? Double(text) ?? (text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : nil)
            }
            if let constant {
                return .constant(constant is NSNull ? .null : ManagedValue(converting: constant, to: attribute.attributeType) ?? .null)
            }
        }
        throw CoreDataError(.migrationMissingMappingModel, """
            The migration step \(step) gives \(entity.name).\(property.name) the value \(text), which needs \
            app code (a function of the migration manager or a custom expression) that a lightweight migration \
            does not run. Load the store with NSMigratePersistentStoresAutomaticallyOption (the mapping is \
            then followed object by object), or migrate it with MigrationManager.migrateStore.
            """)
    }
}
