import Foundation
import OpenCoreDataCore

extension PersistentStore.StoreType {
    /// The PostgreSQL store (`postgres://user@host:port/database?schema=…`): Core Data's tables in
    /// a schema that coordinators in many processes and on many machines share. Naming the type
    /// makes it addable to coordinators.
    public static var postgreSQL: PersistentStore.StoreType {
        PostgreSQLStoreRegistration.register
        return PersistentStore.StoreType(rawValue: PostgreSQLStore.typeName)
    }
}

/// The PostgreSQL store's type name, as `NSSQLiteStoreType` is the SQLite store's (naming it makes
/// the type addable to coordinators).
public let PostgreSQLStoreType: String = {
    PostgreSQLStoreRegistration.register
    return PostgreSQLStore.typeName
}()

/// Registers the store type once per process (a global's initializer runs once, on first use).
private enum PostgreSQLStoreRegistration {
    static let register: Void = {
        StoreTypeRegistry.register(PersistentStore.StoreType(rawValue: PostgreSQLStore.typeName)) { url, options in
            guard let url else {
                throw CoreDataError(.persistentStoreOpen, "A PostgreSQL store needs a URL: postgres://user@host:port/database?schema=name.")
            }
            return try PostgreSQLStore(url: url, options: options)
        } migrator: { url, model, options in
            guard let url else { return }
            if options[NSPersistentStoreStagedMigrationManagerOptionKey] != nil {
                throw CoreDataError(.migration, """
                    A staged migration (NSPersistentStoreStagedMigrationManagerOptionKey) runs on SQLite files \
                    only; the PostgreSQL store was not opened. Migrate it with lightweight migration \
                    (NSMigratePersistentStoresAutomaticallyOption and NSInferMappingModelAutomaticallyOption), \
                    or move it to an SQLite file (migratePersistentStore), migrate that, and move it back.
                    """)
            }
            guard PersistentStore.isOn(NSMigratePersistentStoresAutomaticallyOption, in: options),
                  PersistentStore.isOn(NSInferMappingModelAutomaticallyOption, in: options) else { return }
            try PostgreSQLMigration.migrateIfNeeded(at: url, to: model, options: options)
        } publisher: { url in
            PostgreSQLStoreURL.withoutPassword(url)
        } metadataReader: { url, _ in
            try PostgreSQLStore.metadata(at: url)
        }
    }()
}

extension ManagedObjectModel {
    /// The model a PostgreSQL store (`postgres://…?schema=…`) carries in its `Z_MODELCACHE`, as
    /// ``ManagedObjectModel/init(cachedInStoreAt:)`` reads an SQLite store's: every store this
    /// library creates keeps one, so tools open it without the app's model file. Throws
    /// `CoreDataError` when the schema has none.
    public convenience init(cachedInPostgreSQLStoreAt url: URL) throws {
        try self.init(archive: try PostgreSQLStore.cachedModelArchive(at: url))
    }
}
