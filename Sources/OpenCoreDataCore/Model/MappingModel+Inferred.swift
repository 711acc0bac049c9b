import Foundation

extension MappingModel {
    /// The mapping a lightweight migration infers between two model versions: an entity mapping
    /// for each destination entity (from the source entity of the same name or of its renaming
    /// identifier, or empty for a new entity), whose attributes take the values of the source
    /// attributes they correspond to (`$source.<name>`). Relationships are left to the same
    /// inference (by name or renaming identifier), so the mapping stays one a migration follows
    /// in SQL. Throws 134190 when no mapping can be inferred (a property that changed between
    /// attribute and relationship). Mirrors
    /// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`, which apps
    /// migrating step by step use where a version pair has no mapping model of its own.
    public static func inferredMappingModel(forSourceModel sourceModel: ManagedObjectModel,
                                            destinationModel: ManagedObjectModel) throws -> MappingModel {
        try sourceModel.freeze()
        try destinationModel.freeze()
        let inferred = try InferredMapping(source: sourceModel, destination: destinationModel)
        let mappings = destinationModel.entities.sorted { $0.name < $1.name }.map { entity -> EntityMapping in
            guard let source = inferred.source(of: entity) else {
                return EntityMapping(sourceEntityName: nil, destinationEntityName: entity.name)
            }
            var expressions: [String: String] = [:]
            for case let attribute as AttributeDescription in entity.allProperties where !attribute.isTransient {
                if let old = inferred.sourceProperty(of: attribute, in: entity) { expressions[attribute.name] = "$source." + old.name }
            }
            return EntityMapping(sourceEntityName: source.name, destinationEntityName: entity.name, valueExpressions: expressions)
        }
        return MappingModel(name: "Inferred", sourceModel: sourceModel, destinationModel: destinationModel, entityMappings: mappings)
    }
}
