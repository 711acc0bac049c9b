import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

/// The SQLite and in-memory store types, registered as any other type is (`StoreTypeRegistry`:
/// open, migrate, read metadata), once per process, by the first coordinator that opens a store
/// or reads a store's metadata.
enum BuiltInStoreTypes {
    static let register: Void = {
        StoreTypeRegistry.register(.sqlite, opener: { url, options in
            guard let url else {
                throw CoreDataError(.persistentStoreOpen, "An SQLite store needs a file URL; give the store description a url.")
            }
            // Core Data's in-memory SQLite store (`/dev/null`): nothing on disk.
            let tracksHistory = PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options)
            if url.namesInMemorySQLiteStore { return InMemoryStore(tracksHistory: tracksHistory) }
            return try SQLiteStore(url: url, readOnly: PersistentStore.isOn(NSReadOnlyPersistentStoreOption, in: options),
                                   tracksHistory: tracksHistory, options: try SQLiteStoreOptions(options: options))
        }, migrator: { url, model, options in
            guard let url, !url.namesInMemorySQLiteStore else { return }
            _ = try SQLiteStoreOptions(options: options)    // bad pragmas are refused before anything is migrated
            if let stages = options[NSPersistentStoreStagedMigrationManagerOptionKey] as? StagedMigrationManager {
                try stages.migrate(storeAt: url, to: model, options: options)
            }
            guard PersistentStore.isOn(NSMigratePersistentStoresAutomaticallyOption, in: options) else { return }
            try MigrationManager.migrateWithAppCodeIfNeeded(storeAt: url, to: model, options: options)
            if PersistentStore.isOn(NSInferMappingModelAutomaticallyOption, in: options) {
                try SQLiteMigration.migrateIfNeeded(at: url, to: model, options: options)
            }
        }, metadataReader: { url, _ in
            guard !url.namesInMemorySQLiteStore else {
                throw CoreDataError(.persistentStoreInvalidType,
                                    "An in-memory SQLite store (\(url.path)) keeps no metadata apart from a coordinator; there is none to read.")
            }
            return try SQLiteStore.metadata(at: url)
        })
        StoreTypeRegistry.register(.inMemory, opener: { _, options in
            InMemoryStore(tracksHistory: PersistentStore.isOn(NSPersistentHistoryTrackingKey, in: options))
        })
    }()
}
