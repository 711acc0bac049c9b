import Foundation
import OpenCoreDataCore

/// Core Data's `NSMigrationManager`: ``MigrationManager``.
public typealias NSMigrationManager = MigrationManager
/// Core Data's `NSEntityMigrationPolicy`: ``EntityMigrationPolicy``.
public typealias NSEntityMigrationPolicy = EntityMigrationPolicy

extension MigrationManager {
    /// Core Data's spelling of ``migrateStore(from:type:options:mapping:to:type:options:)``, with
    /// store types as strings (`NSSQLiteStoreType`) and options as Core Data takes them.
    public func migrateStore(from sourceURL: URL, sourceType: String, options sourceOptions: [AnyHashable: Any]?, with mapping: MappingModel?,
                             toDestinationURL destinationURL: URL, destinationType: String, destinationOptions: [AnyHashable: Any]?) throws {
        guard let mapping else {
            throw CoreDataError(.migrationMissingMappingModel, """
                migrateStore needs a mapping model: read the .xcmappingmodel with \
                MappingModel(contentsOf:models:), or build one with \
                MappingModel(name:sourceModel:destinationModel:entityMappings:).
                """)
        }
        try migrateStore(from: sourceURL, type: PersistentStore.StoreType(rawValue: sourceType),
                         options: try PersistentStoreCoordinator.sendableOptions(sourceOptions ?? [:]), mapping: mapping,
                         to: destinationURL, type: PersistentStore.StoreType(rawValue: destinationType),
                         options: try PersistentStoreCoordinator.sendableOptions(destinationOptions ?? [:]))
    }
}
