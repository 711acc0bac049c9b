import Foundation

extension EntityDescription {
    /// The entity named `entityName` in the model of `context`'s coordinator (or its parent's),
    /// or `nil`. Mirrors `NSEntityDescription.entity(forEntityName:in:)`.
    public static func entity(forEntityName entityName: String, in context: ManagedObjectContext) -> EntityDescription? {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }

    /// Makes an object of the named entity (of the entity's class) and inserts it into `context`.
    /// An entity the model does not have is a programmer error and traps with the model's entity
    /// names, as Core Data raises an exception; look the entity up with
    /// ``entity(forEntityName:in:)`` first when the name comes from input. Mirrors
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`.
    @discardableResult
    public static func insertNewObject(forEntityName entityName: String, into context: ManagedObjectContext) -> ManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            let names = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName.keys.sorted().joined(separator: ", ") ?? "none: the context has no coordinator"
            preconditionFailure("The model has no entity named '\(entityName)'. Its entities are: \(names).")
        }
        return entity.managedObjectClass.init(entity: entity, insertInto: context)
    }
}
