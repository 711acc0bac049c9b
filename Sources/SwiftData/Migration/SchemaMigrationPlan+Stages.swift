import Foundation
import OpenCoreDataCore
internal import OpenCoreData

extension ModelContainer {
    /// The staged migration of a plan, and every version's model (for the lightweight steps).
    static func stagedMigration(of plan: any SchemaMigrationPlan.Type) throws(CoreDataError)
        -> (manager: StagedMigrationManager, models: [ManagedObjectModel]) {
        var models: [ObjectIdentifier: ManagedObjectModel] = [:]
        for version in plan.schemas {
            models[ObjectIdentifier(version)] = try Schema(versionedSchema: version).makeModel()
        }
        func model(_ version: any VersionedSchema.Type) throws(CoreDataError) -> ManagedObjectModel {
            if let known = models[ObjectIdentifier(version)] { return known }
            let made = try Schema(versionedSchema: version).makeModel()
            models[ObjectIdentifier(version)] = made
            return made
        }
        var stages: [OpenCoreData.MigrationStage] = []
        for stage in plan.stages {
            switch stage {
            case .lightweight(let from, let to):
                stages.append(LightweightMigrationStage([try model(from).versionChecksum, try model(to).versionChecksum]))
            case .custom(let from, let to, let willMigrate, let didMigrate):
                let source = try model(from), destination = try model(to)
                let custom = CustomMigrationStage(migratingFrom: ManagedObjectModelReference(model: source, versionChecksum: source.versionChecksum),
                                                  to: ManagedObjectModelReference(model: destination, versionChecksum: destination.versionChecksum))
                custom.willMigrateHandler = willMigrate.map { handler(for: $0, schema: Schema(versionedSchema: from)) }
                custom.didMigrateHandler = didMigrate.map { handler(for: $0, schema: Schema(versionedSchema: to)) }
                stages.append(custom)
            }
        }
        return (StagedMigrationManager(stages), Array(models.values))
    }

    /// A stage handler that gives the plan's closure a context of the migrating store, with the
    /// models of the version the store is at.
    private static func handler(for body: @escaping (ModelContext) throws -> Void, schema: Schema) -> CustomMigrationStage.Handler {
        // Unchecked: the plan's closure runs only here, synchronously, while the container that
        // opens the store migrates it, on the thread that opens it.
        let body = UncheckedSendable(body)
        return { manager, _ in
            guard let container = manager.container else { return }
            try body.value(ModelContext(ModelContainer(migrating: container, schema: schema)))
        }
    }
}
