import Foundation
import OpenCoreDataCore

/// One stage of a staged migration: use ``LightweightMigrationStage`` or
/// ``CustomMigrationStage``. Mirrors `NSMigrationStage`.
public class MigrationStage: @unchecked Sendable {
    // @unchecked Sendable: `label` is guarded by its lock; subclasses keep their state behind
    // locks too.
    private let labelStorage = Locked<String?>(nil)

    /// A description of what the stage does, for logs and errors.
    public var label: String? {
        get { labelStorage.withLock { $0 } }
        set { labelStorage.withLock { $0 = newValue } }
    }

    init() {}
}

/// A series of model versions, each reachable from the one before by lightweight migration.
/// Mirrors `NSLightweightMigrationStage`.
public final class LightweightMigrationStage: MigrationStage, @unchecked Sendable {
    /// The versions' checksums (``/OpenCoreDataCore/ManagedObjectModel/versionChecksum``), oldest first.
    public let versionChecksums: [String]

    /// A stage through these versions, oldest first. The models are found among the stages'
    /// references, the models passed under `MigrationSourceModelsOption`, the store's own
    /// model and the coordinator's.
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
    }
}

/// A migration between two model versions with app code before and after it: the store is
/// migrated (lightweight) from ``currentModel`` to ``nextModel``; ``willMigrateHandler`` runs
/// first on a container with the current model, ``didMigrateHandler`` after it on one with the
/// next model (``StagedMigrationManager/container``). Mirrors `NSCustomMigrationStage`.
public final class CustomMigrationStage: MigrationStage, @unchecked Sendable {
    // @unchecked Sendable: the handlers are guarded by their lock; the references are immutable.

    /// What a handler is given: the manager (its ``StagedMigrationManager/container`` opens the
    /// store) and the stage.
    public typealias Handler = @Sendable (StagedMigrationManager, CustomMigrationStage) throws -> Void

    /// The version the stage starts from.
    public let currentModel: ManagedObjectModelReference
    /// The version the stage ends at.
    public let nextModel: ManagedObjectModelReference
    private let handlers = Locked<(will: Handler?, did: Handler?)>((nil, nil))

    /// A stage from one version to the next.
    public init(migratingFrom currentModel: ManagedObjectModelReference, to nextModel: ManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
    }

    /// Runs before the stage, with the store at ``currentModel``: prepare the data (fill values
    /// the next version requires, copy what it will drop).
    public var willMigrateHandler: Handler? {
        get { handlers.withLock { $0.will } }
        set { handlers.withLock { $0.will = newValue } }
    }

    /// Runs after the stage, with the store at ``nextModel``: finish the data (fill new
    /// attributes from the old ones, clean up).
    public var didMigrateHandler: Handler? {
        get { handlers.withLock { $0.did } }
        set { handlers.withLock { $0.did = newValue } }
    }
}
