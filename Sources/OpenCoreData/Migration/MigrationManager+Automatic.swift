import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

extension MigrationManager {
    /// Before a store is opened with `model`: while the store is at another version and a mapping
    /// model under ``MappingModelsOption`` starts at the store's version and runs app code or
    /// filters its source objects, migrates the store through it, object by object, in place
    /// (``SQLiteStoreRewrite``: under the store's write lock, replaced in one transaction,
    /// unchanged if anything fails). Other mappings are left to the lightweight migration, which
    /// follows them in SQL.
    static func migrateWithAppCodeIfNeeded(storeAt url: URL, to model: ManagedObjectModel, options: [String: any Sendable]) throws {
        let mappings = options[MappingModelsOption] as? [MappingModel] ?? []
        guard mappings.contains(where: \.needsMigrationManager) else { return }
        for _ in mappings {
            guard FileManager.default.fileExists(atPath: url.path),
                  let stored = (try? SQLiteStore.metadata(at: url))?["NSStoreModelVersionHashes"] as? [String: Data] else { return }
            try model.freeze()
            // A store already at the version it is opened with is never migrated further.
            guard stored != model.entityVersionHashesByName else { return }
            var next: MappingModel?
            for mapping in mappings where mapping.needsMigrationManager {
                try mapping.sourceModel.freeze()
                try mapping.destinationModel.freeze()
                if mapping.sourceModel.entityVersionHashesByName == stored {
                    next = mapping
                    break
                }
            }
            guard let mapping = next else { return }
            let manager = MigrationManager(sourceModel: mapping.sourceModel, destinationModel: mapping.destinationModel)
            manager.policyTypes = options[MigrationPolicyTypesOption] as? [EntityMigrationPolicy.Type] ?? []
            var passed: [String: any Sendable] = [:]
            for key in [NSSQLitePragmasOption, NSPersistentStoreTimeoutOption] { passed[key] = options[key] }
            let rewrite = SQLiteStoreRewrite(url: url, from: mapping.sourceModel, to: mapping.destinationModel,
                                             tracksHistory: PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options))
            _ = try rewrite.run { scratch, _ in
                // The scratch file must stay out of WAL mode while the live store has it attached.
                var scratchOptions = passed
                var pragmas = passed[NSSQLitePragmasOption] as? [String: any Sendable] ?? [:]
                pragmas["journal_mode"] = "DELETE"
                scratchOptions[NSSQLitePragmasOption] = pragmas
                try manager.migrateStore(from: url, options: passed, mapping: mapping, to: scratch, options: scratchOptions)
            }
        }
    }
}
