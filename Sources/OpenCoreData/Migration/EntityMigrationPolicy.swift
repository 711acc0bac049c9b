import Foundation
import OpenCoreDataCore

/// How the objects of one entity mapping are migrated, stage by stage; subclass it to migrate
/// with your own code, and name the subclass in the mapping (Xcode's "Custom Policy" field, or
/// ``/OpenCoreDataCore/MappingModel/EntityMapping/migrationPolicyClassName``). Mirrors `NSEntityMigrationPolicy`,
/// with the same methods and order:
///
/// 1. for every mapping: ``begin(_:with:)``, ``createDestinationInstances(forSource:in:manager:)``
///    for each source object, ``endInstanceCreation(forMapping:manager:)``;
/// 2. for every mapping: ``createRelationships(forDestination:in:manager:)`` for each destination
///    object made in step 1, ``endRelationshipCreation(forMapping:manager:)``;
/// 3. for every mapping: ``performCustomValidation(forMapping:manager:)``, ``end(_:manager:)``;
///    then the destination context is saved (which validates every object).
///
/// The migration runs on the thread that started it, on the queues of both of the manager's
/// contexts: a policy uses ``MigrationManager/sourceContext`` and
/// ``MigrationManager/destinationContext`` directly, without `perform`. A policy throws to stop
/// the migration; the store is then left as it was.
///
/// A policy is found by the class name the mapping gives (`Module.Class`, or a bare class name
/// written for Objective-C): among the types passed under ``MigrationPolicyTypesOption`` (or
/// ``MigrationManager/policyTypes``), by full or bare name, or else by the Swift runtime's
/// lookup of a `Module.Class` name. Each mapping gets an instance of its own.
open class EntityMigrationPolicy {
    /// Made by the migration manager, once per entity mapping that names the class.
    public required init() {}

    /// Called before any object of `mapping` is made.
    open func begin(_ mapping: MappingModel.EntityMapping, with manager: MigrationManager) throws {}

    /// Makes the destination objects for one source object and associates them with it
    /// (``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``). The default
    /// inserts one object of the destination entity, gives its attributes the mapping's value
    /// expressions (or, for attributes the mapping does not list, the source attribute of the
    /// same name or renaming identifier) and associates it.
    open func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: MappingModel.EntityMapping,
                                         manager: MigrationManager) throws {
        try manager.makeDestinationInstance(forSource: sInstance, in: mapping)
    }

    /// Called when every object of `mapping` has been made.
    open func endInstanceCreation(forMapping mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {}

    /// Sets the relationships of one destination object. The default gives each relationship the
    /// mapping's value expression, or, for relationships the mapping does not list, the
    /// destination objects of the source object's relationship of the same name.
    open func createRelationships(forDestination dInstance: ManagedObject, in mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {
        try manager.makeRelationships(forDestination: dInstance, in: mapping)
    }

    /// Called when the relationships of every destination object of `mapping` are set.
    open func endRelationshipCreation(forMapping mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {}

    /// Checks the destination objects of `mapping` beyond what the model validates.
    open func performCustomValidation(forMapping mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {}

    /// Called last for `mapping`.
    open func end(_ mapping: MappingModel.EntityMapping, manager: MigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selector", arguments…)` in the mapping's value
    /// expressions: Core Data calls the policy's Objective-C method of that selector; here the
    /// policy answers by name. The default throws, naming the selector.
    open func function(_ selector: String, arguments: [Any?], manager: MigrationManager) throws -> Any? {
        throw CoreDataError(.migrationMissingMappingModel, """
            The value expression FUNCTION($entityPolicy, \"\(selector)\", …) has no answer: override \
            function(_:arguments:manager:) in \(type(of: self)) and answer \"\(selector)\".
            """)
    }
}

/// Store option (`[EntityMigrationPolicy.Type]`): the policy classes a migration may use, found
/// by the class names mapping models give.
public let MigrationPolicyTypesOption = "OCDMigrationPolicyTypesOption"
