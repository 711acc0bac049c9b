import Foundation
import OpenCoreDataCore
internal import OpenCoreData

/// The stores of a schema's models and the contexts that use them, as SwiftData's
/// `ModelContainer`.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, Stop.self)
/// let context = ModelContext(container)
/// ```
/// Persistent history is recorded, as SwiftData records it.
public final class ModelContainer: @unchecked Sendable {
    // @unchecked: every stored property is set in `init` and never changed, except
    // `storedMainContext`, which only the main actor reads and writes.

    /// The models the container stores.
    public let schema: Schema
    /// The configuration of its store.
    public let configurations: [ModelConfiguration]
    /// The container underneath: its coordinator and store.
    let persistentContainer: PersistentContainer
    /// The model class of each entity.
    let modelTypes: [String: any PersistentModel.Type]
    @MainActor private var storedMainContext: ModelContext?

    /// A container for these model classes (and the classes their relationships reach, when
    /// listed), with one configuration or the default one.
    public convenience init(for forTypes: any PersistentModel.Type..., configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), configurations: configurations)
    }

    /// A container for a schema, with one configuration or the default one.
    public convenience init(for schema: Schema, configurations: ModelConfiguration...) throws {
        try self.init(for: schema, configurations: configurations)
    }

    /// A container for a schema, with one configuration or the default one. Throws when a
    /// model's property cannot be stored, when the store cannot be opened, or when its data
    /// was written for another schema that cannot be migrated to this one.
    public init(for schema: Schema, configurations: [ModelConfiguration]) throws {
        guard configurations.count <= 1 else {
            throw CoreDataError(.coreData, """
                This version opens one store per container; give ModelContainer one ModelConfiguration \
                (\(configurations.count) were given).
                """)
        }
        let configuration = configurations.first ?? ModelConfiguration()
        let model = try schema.makeModel()
        var types: [String: any PersistentModel.Type] = [:]
        for type in schema.types { types[Schema.entityName(for: type)] = type }
        let container = PersistentContainer(name: configuration.name, managedObjectModel: model)
        let description = PersistentStoreDescription(url: configuration.url)
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.isReadOnly = !configuration.allowsSave
        container.persistentStoreDescriptions = [description]
        if !configuration.isStoredInMemoryOnly {
            try FileManager.default.createDirectory(at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        try container.loadPersistentStores()
        self.schema = schema
        self.configurations = [configuration]
        self.persistentContainer = container
        self.modelTypes = types
    }

    /// The context of the main actor (created on first use).
    @MainActor public var mainContext: ModelContext {
        if let storedMainContext { return storedMainContext }
        let context = ModelContext(container: self, context: persistentContainer.viewContext)
        storedMainContext = context
        return context
    }
}
