import Foundation
import OpenCoreDataCore
import OpenCoreDataSQL

/// Lightweight migration of an SQLite store: when a store was written with another version of
/// the model, its rows are copied into a scratch file laid out for the current model (through an
/// ``InferredMapping``), and that content replaces the store's in one SQLite transaction on the
/// live file, under its write lock for the whole run (see `Migrator.run()`). A failed or
/// interrupted migration leaves the store exactly as it was.
///
/// Keys are kept wherever a table is fed by one old table (so object IDs survive); tables that
/// merge several old tables number their rows anew and every reference follows.
package enum SQLiteMigration {
    /// Migrates the store at `url` to `model` when it was written with another model. Returns
    /// whether it migrated. The store's model is its `Z_MODELCACHE`, or one of
    /// `MigrationSourceModelsOption` whose hashes match its metadata; a mapping model under
    /// `MappingModelsOption` between the store's version and `model` is followed.
    @discardableResult
    package static func migrateIfNeeded(at url: URL, to model: ManagedObjectModel, options: [String: any Sendable]) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        try model.freeze()
        let stored: [String: Data]
        let cached: ManagedObjectModel?
        do {
            let db = try SQLiteConnection(path: url.path, readOnly: true)
            guard try db.tableExists("Z_METADATA") else { return false }
            stored = try SQLiteStore.readMetadata(db)["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
            guard stored != model.entityVersionHashesByName else { return false }
            cached = try SQLiteModelCache.archive(in: db).flatMap { try? ManagedObjectModel(archive: $0) }
        }
        let (source, mappingModel) = try MigrationSourceModel.find(for: "The store at \(url.path)", hashes: stored, cached: cached,
                                                                   destination: model, options: options)
        let mapping = try InferredMapping(source: source, destination: model, mappingModel: mappingModel)
        let progress = options[MigrationProgressHandlerOption] as? @Sendable (MigrationProgress) -> Void
        return try Migrator(url: url, mapping: mapping, tracksHistory: PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options),
                            progress: progress).run()
    }
}
