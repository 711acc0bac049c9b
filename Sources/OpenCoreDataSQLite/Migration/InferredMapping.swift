import Foundation
import OpenCoreDataCore

/// How the entities and properties of the model a store was written with correspond to those of
/// the current model, inferred as Core Data's lightweight migration does: by name, or by the
/// current element's renaming identifier (its name in the older version).
///
/// Entities and properties without a counterpart are new (empty, or defaults) or dropped. A
/// property that changed between attribute and relationship cannot be inferred.
struct InferredMapping {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    /// Source entity of each destination entity.
    private var sourceEntities: [ObjectIdentifier: EntityDescription] = [:]
    /// Destination entity of each source entity.
    private var destinationEntities: [ObjectIdentifier: EntityDescription] = [:]
    /// Per destination entity, the source property of each of its (inherited included) properties.
    private var sourceProperties: [ObjectIdentifier: [String: PropertyDescription]] = [:]

    init(source: ManagedObjectModel, destination: ManagedObjectModel) throws(CoreDataError) {
        self.source = source
        self.destination = destination
        let sourceByName = source.entitiesByName
        for entity in destination.entities {
            guard let match = entity.renamingIdentifier.flatMap({ sourceByName[$0] }) ?? sourceByName[entity.name] else { continue }
            sourceEntities[ObjectIdentifier(entity)] = match
            destinationEntities[ObjectIdentifier(match)] = entity
        }
        for entity in destination.entities {
            guard let match = sourceEntities[ObjectIdentifier(entity)] else { continue }
            let candidates = Dictionary(match.allProperties.filter { !$0.isTransient }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var properties: [String: PropertyDescription] = [:]
            for property in entity.allProperties where !property.isTransient {
                guard let counterpart = property.renamingIdentifier.flatMap({ candidates[$0] }) ?? candidates[property.name] else { continue }
                switch (property, counterpart) {
                case (is AttributeDescription, is AttributeDescription):
                    properties[property.name] = counterpart
                case (let relationship as RelationshipDescription, let old as RelationshipDescription):
                    // Same destination, up to renaming and moves within a hierarchy.
                    guard let oldDestination = old.destinationEntity, let newDestination = relationship.destinationEntity,
                          let mapped = destinationEntities[ObjectIdentifier(oldDestination)],
                          mapped.isKindOf(entity: newDestination) || newDestination.isKindOf(entity: mapped) else { continue }
                    properties[property.name] = counterpart
                default:
                    throw CoreDataError(.inferredMappingModel, "Cannot infer a mapping for \(entity.name).\(property.name): it is \(property is AttributeDescription ? "an attribute" : "a relationship") now and was \(counterpart is AttributeDescription ? "an attribute" : "a relationship") in the store's model. Give the new property another name (so the old one is dropped) or migrate the data yourself.")
                }
            }
            sourceProperties[ObjectIdentifier(entity)] = properties
        }
    }

    /// The destination entity rows of `entity` (a source entity) become; nil when it was removed.
    func destination(of entity: EntityDescription) -> EntityDescription? {
        destinationEntities[ObjectIdentifier(entity)]
    }

    /// The source entity of a destination entity; nil for a new entity.
    func source(of entity: EntityDescription) -> EntityDescription? {
        sourceEntities[ObjectIdentifier(entity)]
    }

    /// The source property whose values `property` of `entity` (destination) takes.
    func source(of property: PropertyDescription, in entity: EntityDescription) -> PropertyDescription? {
        sourceProperties[ObjectIdentifier(entity)]?[property.name]
    }
}
