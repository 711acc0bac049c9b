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

    /// A container for these model classes (and the classes their relationships reach), with
    /// one configuration or the default one.
    public convenience init(for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for a schema, with one configuration or the default one.
    public convenience init(for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: schema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for a schema, with one configuration or the default one. A store written
    /// with an older version of the models is migrated: through `migrationPlan`'s stages when
    /// it names the store's version, else by a lightweight migration. Throws when a model's
    /// property cannot be stored, when the store cannot be opened, or when its data was written
    /// for a version that cannot be migrated to this one.
    public init(for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: [ModelConfiguration]) throws {
        guard configurations.count <= 1 else {
            throw CoreDataError(.coreData, """
                This version opens one store per container; give ModelContainer one ModelConfiguration \
                (\(configurations.count) were given).
                """)
        }
        let configuration = configurations.first ?? ModelConfiguration()
        let model = try schema.makeModel()
        let container = PersistentContainer(name: configuration.name, managedObjectModel: model)
        let description = PersistentStoreDescription(url: configuration.url, type: try Self.storeType(for: configuration.url))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.isReadOnly = !configuration.allowsSave
        if let migrationPlan {
            let (manager, models) = try Self.stagedMigration(of: migrationPlan)
            description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
            description.setOption(models, forKey: MigrationSourceModelsOption)
        }
        container.persistentStoreDescriptions = [description]
        if configuration.url.isFileURL && !configuration.isStoredInMemoryOnly {
            try FileManager.default.createDirectory(at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        try container.loadPersistentStores()
        self.schema = schema
        self.configurations = [configuration]
        self.persistentContainer = container
        self.modelTypes = schema.typesByEntityName
    }

    /// The store type of a configuration's URL: SQLite for a file, PostgreSQL for
    /// `postgres://…` (when the OpenCoreDataPostgreSQL product is linked and its type named).
    private static func storeType(for url: URL) throws(CoreDataError) -> PersistentStore.StoreType {
        guard ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? "") else { return .sqlite }
        let type = PersistentStore.StoreType(rawValue: PersistentStore.StoreType.postgreSQLName)
        guard StoreTypeRegistry.opener(for: type) != nil else {
            throw CoreDataError(.persistentStoreInvalidType, """
                \(url.absoluteString) is a PostgreSQL store: add the OpenCoreDataPostgreSQL product to the target, \
                `import OpenCoreDataPostgreSQL` and name its store type once (`_ = PostgreSQLStoreType`) before \
                opening the container.
                """)
        }
        return type
    }

    /// A container over a store a staged migration has open, with the models of the version the
    /// store is at (for a migration stage's handlers).
    init(migrating container: PersistentContainer, schema: Schema) {
        self.schema = schema
        self.configurations = []
        self.persistentContainer = container
        self.modelTypes = schema.typesByEntityName
    }

    /// The context of the main actor (created on first use), which saves on its own after
    /// changes (``ModelContext/autosaveEnabled``) when the main queue is serviced (see the
    /// README's "The main queue").
    @MainActor public var mainContext: ModelContext {
        if let storedMainContext { return storedMainContext }
        let context = ModelContext(container: self, context: persistentContainer.viewContext)
        context.autosaveEnabled = true
        storedMainContext = context
        return context
    }
}
