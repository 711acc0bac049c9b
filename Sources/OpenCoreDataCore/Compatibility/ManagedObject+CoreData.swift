import Foundation

extension ManagedObject {
    /// The entity of this class in the models coordinators use (the newest one that has the
    /// class). A class no model in use has is a programmer error and traps with a message, as
    /// Core Data cannot answer either. Mirrors `NSManagedObject.entity()`.
    public class func entity() -> EntityDescription {
        guard let entity = ModelsInUse.entity(for: self) else {
            preconditionFailure("""
                No model in use has an entity for the class \(self). Make a PersistentStoreCoordinator (or \
                container) with a model that has it first.
                """)
        }
        return entity
    }
}
