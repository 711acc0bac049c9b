import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

extension PersistentStoreCoordinator {
    /// Opens a store and adds it. Mirrors `addPersistentStore(type:configuration:at:options:)`.
    ///
    /// `.sqlite` needs a file URL (created when missing); `.inMemory` ignores `url`. A store
    /// written with another version of the model is migrated first when both
    /// `NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption`
    /// are on (a container's descriptions turn them on; see docs/Compatibility.md). Throws 134100 when
    /// an existing store was written with a different model and is not migrated, 134110–134190
    /// when a migration fails (the store is then unchanged), 134000 for an unknown type or a file
    /// that is not a store.
    @discardableResult
    public func addPersistentStore(type: PersistentStore.StoreType, configuration: String? = nil, at url: URL? = nil,
                                   options: [String: any Sendable] = [:]) throws -> PersistentStore {
        let engine = try makeEngine(type: type, at: url, options: options)
        let store = PersistentStore(type: type, url: type == .inMemory ? nil : url, configurationName: configuration, options: options,
                                    engine: engine)
        do {
            try add(store)
        } catch {
            engine.close()
            throw error
        }
        return store
    }

    /// The engine of a store of `type` at `url`, migrated first when its options ask for it (not
    /// yet loaded): every type — SQLite, in-memory, PostgreSQL, any other — through its
    /// registration (``BuiltInStoreTypes``, `StoreTypeRegistry`).
    func makeEngine(type: PersistentStore.StoreType, at url: URL?, options: [String: any Sendable]) throws -> any StoreEngine {
        BuiltInStoreTypes.register
        guard let opener = StoreTypeRegistry.opener(for: type) else {
            throw CoreDataError(.persistentStoreInvalidType, """
                Unknown store type '\(type.rawValue)'. Use .sqlite or .inMemory (or .postgreSQL, after \
                import OpenCoreDataPostgreSQL).
                """)
        }
        if let migrator = StoreTypeRegistry.migrator(for: type), !PersistentStore.isOn(NSReadOnlyPersistentStoreOption, in: options) {
            try managedObjectModel.freeze()
            try migrator(url, managedObjectModel, options)
        }
        return try opener(url, options)
    }

    /// The metadata of a store, without adding it: an SQLite file, or a store of a registered
    /// type that keeps it (a PostgreSQL schema). Mirrors `metadataForPersistentStore(type:at:options:)`:
    /// `NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes` (`[String: Data]`), … — what an
    /// app compares with its model (`isConfiguration(withName:compatibleWithStoreMetadata:)`)
    /// before it decides to migrate.
    public static func metadataForPersistentStore(type: PersistentStore.StoreType, at url: URL,
                                                  options: [String: any Sendable] = [:]) throws -> [String: any Sendable] {
        BuiltInStoreTypes.register
        guard let reader = StoreTypeRegistry.metadataReader(for: type) else {
            throw CoreDataError(.persistentStoreInvalidType, """
                Stores of type '\(type.rawValue)' keep no metadata apart from a coordinator (SQLite files and \
                PostgreSQL schemas do); there is none to read at \(url.absoluteString).
                """)
        }
        return try reader(url, options)
    }
}

extension PersistentStoreCoordinator {
    /// Moves a store to a new location and type — SQLite to PostgreSQL and back, or either to
    /// memory — and puts the copy in its place. Mirrors `migratePersistentStore(_:to:options:type:)`.
    ///
    /// The destination (a new file, an empty schema) receives every object under its own key,
    /// to-one and to-many relationships, many-to-many pairs, the order of ordered relationships,
    /// each entity's key counter, the app's metadata keys and the store's UUID (as Core Data
    /// keeps it: object IDs and their URIs name the same objects in the copy); then `store` is
    /// removed from the coordinator (its file or schema stays as it was) once the destination is
    /// added, and the destination is returned. Contexts still hold objects of the removed store:
    /// refetch them. Persistent history is copied when both stores record it (`options` with
    /// `NSPersistentHistoryTrackingKey`): each transaction under its own number, so that history
    /// tokens keep their meaning; the copying itself is not recorded. Throws 134070 when the
    /// destination already holds objects (nothing is removed then).
    ///
    /// An SQLite destination is written whole or not at all, a crash included: the objects are
    /// copied into a file beside it (`.NAME.migrating`, removed afterwards, and by the next
    /// attempt when a crash left it) and put in place whole: renamed to a new destination, or
    /// copied in one SQLite transaction into an existing (empty) one.
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: [String: any Sendable] = [:],
                                       type: PersistentStore.StoreType) throws -> PersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw CoreDataError(.persistentStoreOperation,
                                "The store \(store.identifier) is not part of this coordinator; add it before migrating it.")
        }
        try managedObjectModel.freeze()
        let staging = type == .sqlite && !url.namesInMemorySQLiteStore ? try SQLiteStore.stagingFile(for: url) : nil
        if let staging {
            // The destination itself must hold no objects either (Core Data's rule).
            if FileManager.default.fileExists(atPath: url.path) {
                let existing = try makeEngine(type: type, at: url, options: options)
                defer { existing.close() }
                try existing.load(model: managedObjectModel)
                try StoreCopy.requireEmpty(existing, model: managedObjectModel)
            }
            do {
                let copy = try makeEngine(type: type, at: staging, options: options)
                defer { copy.close() }
                try copy.load(model: managedObjectModel)
                try StoreCopy.copy(from: store.engine, to: copy, model: managedObjectModel)
            } catch {
                SQLiteStore.removeFiles(at: staging)
                throw error
            }
            try SQLiteStore.install(staging, at: url, options: try SQLiteStoreOptions(options: options))
        }
        let engine = try makeEngine(type: type, at: url, options: options)
        let migrated = PersistentStore(type: type, url: type == .inMemory ? nil : url, configurationName: store.configurationName, options: options,
                                       engine: engine)
        do {
            try engine.load(model: managedObjectModel)
            if staging == nil { try StoreCopy.copy(from: store.engine, to: engine, model: managedObjectModel) }
            // In the source's place in one step (they share a UUID): a failure leaves the source.
            try add(migrated, replacing: store)
        } catch {
            engine.close()
            throw error
        }
        return migrated
    }
}
