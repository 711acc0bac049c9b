// Core Data's names for staged migration.

/// Core Data's `NSStagedMigrationManager`: ``StagedMigrationManager``.
public typealias NSStagedMigrationManager = StagedMigrationManager
/// Core Data's `NSMigrationStage`: ``MigrationStage``.
public typealias NSMigrationStage = MigrationStage
/// Core Data's `NSLightweightMigrationStage`: ``LightweightMigrationStage``.
public typealias NSLightweightMigrationStage = LightweightMigrationStage
/// Core Data's `NSCustomMigrationStage`: ``CustomMigrationStage``.
public typealias NSCustomMigrationStage = CustomMigrationStage
/// Core Data's `NSManagedObjectModelReference`: ``ManagedObjectModelReference``.
public typealias NSManagedObjectModelReference = ManagedObjectModelReference
