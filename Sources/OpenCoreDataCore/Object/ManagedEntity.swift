/// A managed object class that describes its own entity: what `@Managed` generates.
///
/// `ManagedObjectModel(Note.self, …)` asks each class for its entity description.
public protocol ManagedEntity: ManagedObject {
    /// The entity's name (the class name by default).
    static var entityName: String { get }
    /// Makes a new description of the class's entity (one per model that uses it).
    static func makeEntityDescription() -> EntityDescription
}

extension ManagedEntity {
    /// A fetch request for all objects of this class's entity (sub-entities included), as
    /// Xcode's generated `fetchRequest()`.
    public static func fetchRequest() -> FetchRequest<Self> {
        FetchRequest<Self>(entityName: entityName)
    }
}
