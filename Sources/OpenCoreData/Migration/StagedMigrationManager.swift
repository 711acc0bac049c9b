import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

/// Migrates a store through a series of model versions, stage by stage, running app code around
/// the stages that need it. Pass it under `NSPersistentStoreStagedMigrationManagerOptionKey`
/// in the store description's options; loading the store runs the stages that lead from the
/// store's version to the coordinator's model. Mirrors `NSStagedMigrationManager`.
///
/// Each step is a lightweight migration of its own, committed before the next begins: a failing
/// step or handler leaves the store at the last version reached (loading it again goes on from
/// there). A store whose version no stage names is left to the usual lightweight migration.
public final class StagedMigrationManager: @unchecked Sendable {
    // @unchecked Sendable: `stages` is immutable (the stages guard their own state) and the
    // container is behind its lock.

    /// The stages, in the order they apply.
    public let stages: [MigrationStage]
    private let current = Locked<PersistentContainer?>(nil)

    /// A manager for these stages.
    public init(_ stages: [MigrationStage]) {
        self.stages = stages
    }

    /// While a custom stage's handler runs: a container on the migrating store, with the model of
    /// the store's version at that moment. `nil` otherwise.
    public var container: PersistentContainer? { current.withLock { $0 } }

    /// One step from a version to the next.
    private enum Step {
        case lightweight(to: String, stage: LightweightMigrationStage)
        case custom(CustomMigrationStage)
    }

    /// Runs the stages that lead the store at `url` to `model`.
    func migrate(storeAt url: URL, to model: ManagedObjectModel, options: [String: any Sendable]) throws {
        guard FileManager.default.fileExists(atPath: url.path),
              let hashes = (try? SQLiteStore.metadata(at: url))?["NSStoreModelVersionHashes"] as? [String: Data] else { return }
        try model.freeze()
        let goal = model.versionChecksum
        var version = ManagedObjectModel.versionChecksum(of: hashes)
        var known = Models(options[MigrationSourceModelsOption] as? [ManagedObjectModel] ?? [])
        known.add(model)
        if let cached = try? ManagedObjectModel(cachedInStoreAt: url) { known.add(cached) }
        var visited: Set<String> = []
        while version != goal, let step = step(from: version) {
            guard visited.insert(version).inserted else {
                throw CoreDataError(.migration, """
                    The migration stages go round in a circle at the version \(version); list each version \
                    once, oldest first.
                    """)
            }
            switch step {
            case .lightweight(let next, let stage):
                guard let source = known[version], let destination = known[next] else {
                    let missing = known[version] == nil ? version : next
                    throw CoreDataError(.migrationMissingSourceModel, """
                        The lightweight stage\(stage.label.map { " '\($0)'" } ?? "") names the model version \
                        \(missing), which is not at hand. Pass the model's versions under \
                        MigrationSourceModelsOption (ManagedObjectModel.versions(contentsOf:)) or reference it \
                        in a custom stage.
                        """)
                }
                try lightweight(url, from: source, to: destination, options: options)
                version = next
            case .custom(let stage):
                let source = try stage.currentModel.resolvedModel()
                let destination = try stage.nextModel.resolvedModel()
                known.add(source)
                known.add(destination)
                if let handler = stage.willMigrateHandler { try run(handler, of: stage, on: url, model: source, options: options,
                                                                    moment: "willMigrateHandler") }
                try lightweight(url, from: source, to: destination, options: options)
                if let handler = stage.didMigrateHandler { try run(handler, of: stage, on: url, model: destination, options: options,
                                                                   moment: "didMigrateHandler") }
                version = stage.nextModel.versionChecksum
            }
        }
    }

    /// The stage step that starts at `version`, if any.
    private func step(from version: String) -> Step? {
        for stage in stages {
            if let custom = stage as? CustomMigrationStage, custom.currentModel.versionChecksum == version {
                return .custom(custom)
            }
            if let lightweight = stage as? LightweightMigrationStage, let index = lightweight.versionChecksums.firstIndex(of: version),
               index + 1 < lightweight.versionChecksums.count {
                return .lightweight(to: lightweight.versionChecksums[index + 1], stage: lightweight)
            }
        }
        return nil
    }

    private func lightweight(_ url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel,
                             options: [String: any Sendable]) throws {
        var stepOptions = options
        stepOptions[MigrationSourceModelsOption] = [source]
        try SQLiteMigration.migrateIfNeeded(at: url, to: destination, options: stepOptions)
    }

    /// Runs a handler with ``container`` open on the store at `model`'s version.
    private func run(_ handler: CustomMigrationStage.Handler, of stage: CustomMigrationStage, on url: URL, model: ManagedObjectModel,
                     options: [String: any Sendable], moment: String) throws {
        let container = PersistentContainer(name: url.deletingPathExtension().lastPathComponent, managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        for key in [NSPersistentHistoryTrackingKey, NSSQLitePragmasOption, NSPersistentStoreTimeoutOption] {
            if let value = options[key] { description.setOption(value, forKey: key) }
        }
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        current.withLock { $0 = container }
        defer {
            current.withLock { $0 = nil }
            let coordinator = container.persistentStoreCoordinator
            for store in coordinator.persistentStores { try? coordinator.remove(store) }
        }
        do {
            try handler(self, stage)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.migration, """
                The \(moment) of the migration stage\(stage.label.map { " '\($0)'" } ?? "") from \
                \(stage.currentModel.versionChecksum) failed: \(error). The store stays at the version reached \
                so far; loading it again resumes from there.
                """)
        }
    }
}

/// Models at hand, by version checksum.
private struct Models {
    private var byChecksum: [String: ManagedObjectModel] = [:]

    init(_ models: [ManagedObjectModel]) {
        for model in models { add(model) }
    }

    mutating func add(_ model: ManagedObjectModel) {
        let checksum = model.versionChecksum
        if byChecksum[checksum] == nil { byChecksum[checksum] = model }
    }

    subscript(checksum: String) -> ManagedObjectModel? { byChecksum[checksum] }
}

