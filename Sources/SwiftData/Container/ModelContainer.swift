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
    /// The configurations of its stores, in the order given.
    public let configurations: [ModelConfiguration]
    /// The container underneath: its coordinator and store.
    let persistentContainer: PersistentContainer
    /// The model class of each entity.
    let modelTypes: [String: any PersistentModel.Type]
    @MainActor private var storedMainContext: ModelContext?

    /// A container for these model classes (and the classes their relationships reach), with
    /// the stores its configurations describe, or the default one.
    public convenience init(for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for a schema, with the stores its configurations describe, or the default one.
    public convenience init(for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: schema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for a schema, with the stores its configurations describe (the default one
    /// when none is given). With several, each store holds the models of its configuration's
    /// schema (every model for a configuration without one), as Core Data's model configurations
    /// do: a new model is saved to the first store that holds its class, and a relationship
    /// between models of two stores is refused when saved. A store written with an older version
    /// of the models is migrated: through `migrationPlan`'s stages when it names the store's
    /// version, else by a lightweight migration. Throws when a model's property cannot be
    /// stored, when two configurations share a name or a store, when a configuration names a
    /// model the schema lacks, when a store cannot be opened, or when its data was written for a
    /// version that cannot be migrated to this one.
    public init(for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: [ModelConfiguration]) throws {
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        let model = try schema.makeModel()
        try Self.assign(configurations, in: model, of: schema)
        let container = PersistentContainer(name: configurations[0].name, managedObjectModel: model)
        var descriptions: [PersistentStoreDescription] = []
        for configuration in configurations {
            let description = PersistentStoreDescription(url: configuration.url, type: try Self.storeType(for: configuration.url))
            if configurations.count > 1 || configuration.schema != nil { description.configuration = configuration.name }
            description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
            description.isReadOnly = !configuration.allowsSave
            if let migrationPlan {
                let (manager, models) = try Self.stagedMigration(of: migrationPlan)
                description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
                description.setOption(models, forKey: MigrationSourceModelsOption)
            }
            if configuration.url.isFileURL && !configuration.isStoredInMemoryOnly {
                try FileManager.default.createDirectory(at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            descriptions.append(description)
        }
        container.persistentStoreDescriptions = descriptions
        try container.loadPersistentStores()
        self.schema = schema
        self.configurations = configurations
        self.persistentContainer = container
        self.modelTypes = schema.typesByEntityName
    }

    /// Makes each configuration that names a schema a configuration of `model` with its models'
    /// entities (only when there are several stores or one names a schema: a single store keeps
    /// the model's default configuration, as SwiftData's does).
    private static func assign(_ configurations: [ModelConfiguration], in model: ManagedObjectModel, of schema: Schema) throws(CoreDataError) {
        var names = Set<String>()
        var stores = Set<URL>()
        for configuration in configurations {
            guard names.insert(configuration.name).inserted else {
                throw CoreDataError(.coreData, """
                    Two ModelConfigurations are named \(configuration.name); give each store of a container a name of its own.
                    """)
            }
            guard configuration.isStoredInMemoryOnly || stores.insert(configuration.url.standardizedFileURL).inserted else {
                throw CoreDataError(.coreData, """
                    The ModelConfigurations of one container share the store \(configuration.url.absoluteString); give \
                    each its own URL.
                    """)
            }
            guard configurations.count > 1 || configuration.schema != nil else { continue }
            let entities = model.entitiesByName
            let wanted = configuration.schema.map { $0.types.map { Schema.entityName(for: $0) } } ?? model.entities.map(\.name)
            let missing = wanted.filter { entities[$0] == nil }
            guard missing.isEmpty else {
                throw CoreDataError(.coreData, """
                    The ModelConfiguration \(configuration.name) holds \(missing.joined(separator: ", ")), which the \
                    container's schema does not: add \(missing.count == 1 ? "it" : "them") to the schema given to ModelContainer.
                    """)
            }
            model.setEntities(wanted.compactMap { entities[$0] }, forConfigurationName: configuration.name)
        }
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
