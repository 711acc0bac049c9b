import Foundation

/// Core Data's name for ``ManagedObject``.
public typealias NSManagedObject = ManagedObject
/// Core Data's name for ``ManagedObjectID``.
public typealias NSManagedObjectID = ManagedObjectID
/// Core Data's name for ``ManagedObjectContext``.
public typealias NSManagedObjectContext = ManagedObjectContext
/// Core Data's name for ``ManagedObjectContext/ConcurrencyType``.
public typealias NSManagedObjectContextConcurrencyType = ManagedObjectContext.ConcurrencyType
/// Core Data's name for ``ManagedObjectModel``.
public typealias NSManagedObjectModel = ManagedObjectModel
/// Core Data's name for ``EntityDescription``.
public typealias NSEntityDescription = EntityDescription
/// Core Data's name for ``PropertyDescription``.
public typealias NSPropertyDescription = PropertyDescription
/// Core Data's name for ``AttributeDescription``.
public typealias NSAttributeDescription = AttributeDescription
/// Core Data's name for ``AttributeType``.
public typealias NSAttributeType = AttributeType
/// Core Data's name for ``PersistentStoreCoordinator``.
public typealias NSPersistentStoreCoordinator = PersistentStoreCoordinator
/// Core Data's name for ``PersistentStore``.
public typealias NSPersistentStore = PersistentStore
/// Core Data's name for ``PersistentStoreDescription``.
public typealias NSPersistentStoreDescription = PersistentStoreDescription
/// Core Data's name for ``FetchRequest``.
public typealias NSFetchRequest = FetchRequest
/// Core Data's name for ``MergeConflict``.
public typealias NSMergeConflict = MergeConflict
/// Core Data's name for ``FetchedResultsController``.
public typealias NSFetchedResultsController = FetchedResultsController
/// Core Data's name for ``FetchedResultsControllerDelegate``.
public typealias NSFetchedResultsControllerDelegate = FetchedResultsControllerDelegate
/// Core Data's name for ``FetchedResultsSectionInfo``.
public typealias NSFetchedResultsSectionInfo = FetchedResultsSectionInfo
/// Core Data's name for ``FetchedResultsChangeType``.
public typealias NSFetchedResultsChangeType = FetchedResultsChangeType

/// Core Data's SQLite store type name.
public let NSSQLiteStoreType = PersistentStore.StoreType.sqlite.rawValue
/// Core Data's in-memory store type name.
public let NSInMemoryStoreType = PersistentStore.StoreType.inMemory.rawValue

/// The `userInfo` key of the inserted objects in save and change notifications.
public let NSInsertedObjectsKey = "inserted"
/// The `userInfo` key of the updated objects in save and change notifications.
public let NSUpdatedObjectsKey = "updated"
/// The `userInfo` key of the deleted objects in save and change notifications.
public let NSDeletedObjectsKey = "deleted"
/// The `userInfo` key of refreshed objects in change notifications.
public let NSRefreshedObjectsKey = "refreshed"
/// The `userInfo` key of invalidated objects in change notifications.
public let NSInvalidatedObjectsKey = "invalidated"
/// The `userInfo` key saying that every object of the context was invalidated: the
/// objects-did-change notification ``ManagedObjectContext/reset()`` posts carries it, with the
/// IDs of the objects the context held (`[ManagedObjectID]`).
public let NSInvalidatedAllObjectsKey = "invalidatedAll"

/// Store option: record persistent history (`NSPersistentHistoryTrackingKey`).
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Store option: post `.NSPersistentStoreRemoteChange` notifications.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// Store option: migrate a store written with an older model when it is added.
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Store option: infer the mapping between the store's model and the current one.
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Store option: the `StagedMigrationManager` that migrates an SQLite store through its stages
/// before it opens.
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"
/// Store option (`[ManagedObjectModel]`): the models a store may have been written with, for
/// stores that carry no model of their own (see ``ManagedObjectModel/versions(contentsOf:)``).
public let MigrationSourceModelsOption = "OCDMigrationSourceModelsOption"
/// Store option (`[MappingModel]`): mapping models a migration follows when one matches the
/// store's version and the current one.
public let MappingModelsOption = "OCDMappingModelsOption"
/// Store option (`@Sendable (MigrationProgress) -> Void`): called as a migration copies rows.
public let MigrationProgressHandlerOption = "OCDMigrationProgressHandlerOption"
/// Store option: open the store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Store option (`[String: value]`): SQLite pragmas run on the store's connections after its
/// defaults, e.g. `["synchronous": "FULL"]` to make every commit survive a power loss.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// Store option (seconds): how long a connection waits for another connection's lock (another
/// process saving or migrating) before the operation fails with 134090. Ours defaults to 10 s.
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// Metadata key: the store's UUID.
public let NSStoreUUIDKey = "NSStoreUUID"
/// Remote-change userInfo key: the store's URL.
public let NSPersistentStoreURLKey = "storeURL"
/// Remote-change userInfo key: the store's history token after the change.
public let NSPersistentHistoryTokenKey = "historyToken"
/// Metadata key: the store's type.
public let NSStoreTypeKey = "NSStoreType"

extension Notification.Name {
    /// Posted by a context after a successful save, on its queue (object: the context).
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted by a context at the end of `processPendingChanges()` when objects changed.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// Posted by a coordinator when its store changed (remote-change notifications).
    public static let NSPersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
    /// Posted by a context when a save begins (``ManagedObjectContext/willSaveObjectsNotification``).
    public static let NSManagedObjectContextWillSave = ManagedObjectContext.willSaveObjectsNotification
    /// Posted by a context after a save, with object IDs (``ManagedObjectContext/didSaveObjectIDsNotification``).
    public static let NSManagedObjectContextDidSaveObjectIDs = ManagedObjectContext.didSaveObjectIDsNotification
    /// Posted by a context after it merged changes
    /// (``ManagedObjectContext/didMergeChangesObjectIDsNotification``).
    public static let NSManagedObjectContextDidMergeChangesObjectIDs = ManagedObjectContext.didMergeChangesObjectIDsNotification
}

extension ManagedObjectContext {
    /// Core Data's Swift name for `.NSManagedObjectContextDidSave`.
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// Core Data's Swift name for `.NSManagedObjectContextObjectsDidChange`.
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange

    /// The `userInfo` keys of the contexts' notifications, as Core Data's Swift names them
    /// (`userInfo[NotificationKey.insertedObjects.rawValue]`).
    public enum NotificationKey: String, Sendable {
        /// `NSInsertedObjectsKey`: a `Set` of the inserted objects.
        case insertedObjects = "inserted"
        /// `NSUpdatedObjectsKey`: a `Set` of the updated objects.
        case updatedObjects = "updated"
        /// `NSDeletedObjectsKey`: a `Set` of the deleted objects.
        case deletedObjects = "deleted"
        /// `NSRefreshedObjectsKey`: a `Set` of the objects refreshed by a merge.
        case refreshedObjects = "refreshed"
        /// `NSInvalidatedObjectsKey`.
        case invalidatedObjects = "invalidated"
        /// `NSInvalidatedAllObjectsKey`: posted by `reset()`.
        case invalidatedAllObjects = "invalidatedAll"
        /// `NSInsertedObjectIDsKey`: a `Set` of the inserted objects' IDs.
        case insertedObjectIDs = "inserted_objectIDs"
        /// `NSUpdatedObjectIDsKey`: a `Set` of the updated objects' IDs.
        case updatedObjectIDs = "updated_objectIDs"
        /// `NSDeletedObjectIDsKey`: a `Set` of the deleted objects' IDs.
        case deletedObjectIDs = "deleted_objectIDs"
    }
}

/// Core Data's name for what a fetch request returns; `NSFetchRequest<NSFetchRequestResult>` is
/// an untyped request (see ``FetchRequest``).
public typealias NSFetchRequestResult = FetchRequestResult
/// Core Data's name for ``FetchRequestResultType``.
public typealias NSFetchRequestResultType = FetchRequestResultType

extension ManagedObjectContext.ConcurrencyType {
    /// Core Data's name for ``ManagedObjectContext/ConcurrencyType/privateQueue``.
    public static let privateQueueConcurrencyType = Self.privateQueue
    /// Core Data's name for ``ManagedObjectContext/ConcurrencyType/mainQueue``.
    public static let mainQueueConcurrencyType = Self.mainQueue
}

/// Core Data's global for ``MergePolicy/error``.
public let NSErrorMergePolicy = MergePolicy.error
/// Core Data's global for ``MergePolicy/mergeByPropertyStoreTrump``.
public let NSMergeByPropertyStoreTrumpMergePolicy = MergePolicy.mergeByPropertyStoreTrump
/// Core Data's global for ``MergePolicy/mergeByPropertyObjectTrump``.
public let NSMergeByPropertyObjectTrumpMergePolicy = MergePolicy.mergeByPropertyObjectTrump
/// Core Data's global for ``MergePolicy/overwrite``.
public let NSOverwriteMergePolicy = MergePolicy.overwrite
/// Core Data's global for ``MergePolicy/rollback``.
public let NSRollbackMergePolicy = MergePolicy.rollback

/// The `userInfo` key of inserted object IDs in `didSaveObjectIDsNotification`.
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// The `userInfo` key of updated object IDs in `didSaveObjectIDsNotification`.
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// The `userInfo` key of deleted object IDs in `didSaveObjectIDsNotification`.
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
/// Core Data's name for ``MergePolicy``.
public typealias NSMergePolicy = MergePolicy
/// Core Data's name for ``ConstraintConflict``.
public typealias NSConstraintConflict = ConstraintConflict
/// Core Data's name for ``MergePolicy/PolicyType``.
public typealias NSMergePolicyType = MergePolicy.PolicyType
/// Core Data's name for ``PersistentStoreRequest``.
public typealias NSPersistentStoreRequest = PersistentStoreRequest
/// Core Data's name for ``PersistentStoreResult``.
public typealias NSPersistentStoreResult = PersistentStoreResult
/// Core Data's name for ``BatchInsertRequest``.
public typealias NSBatchInsertRequest = BatchInsertRequest
/// Core Data's name for ``BatchUpdateRequest``.
public typealias NSBatchUpdateRequest = BatchUpdateRequest
/// Core Data's name for ``BatchDeleteRequest``.
public typealias NSBatchDeleteRequest = BatchDeleteRequest
/// Core Data's name for ``BatchInsertResult``.
public typealias NSBatchInsertResult = BatchInsertResult
/// Core Data's name for ``BatchUpdateResult``.
public typealias NSBatchUpdateResult = BatchUpdateResult
/// Core Data's name for ``BatchDeleteResult``.
public typealias NSBatchDeleteResult = BatchDeleteResult

/// Core Data's name for ``PersistentHistoryToken``.
public typealias NSPersistentHistoryToken = PersistentHistoryToken
/// Core Data's name for ``PersistentHistoryTransaction``.
public typealias NSPersistentHistoryTransaction = PersistentHistoryTransaction
/// Core Data's name for ``PersistentHistoryChange``.
public typealias NSPersistentHistoryChange = PersistentHistoryChange
/// Core Data's name for ``PersistentHistoryChangeRequest``.
public typealias NSPersistentHistoryChangeRequest = PersistentHistoryChangeRequest
/// Core Data's name for ``PersistentHistoryResult``.
public typealias NSPersistentHistoryResult = PersistentHistoryResult
/// Core Data's name for ``QueryGenerationToken``.
public typealias NSQueryGenerationToken = QueryGenerationToken
/// Core Data's name for ``AsynchronousFetchRequest``.
public typealias NSAsynchronousFetchRequest = AsynchronousFetchRequest
/// Core Data's name for ``AsynchronousFetchResult``.
public typealias NSAsynchronousFetchResult = AsynchronousFetchResult
/// Core Data's name for ``PersistentStoreResult`` of an asynchronous request.
public typealias NSPersistentStoreAsynchronousResult = PersistentStoreResult
/// Core Data's name for ``MappingModel``.
public typealias NSMappingModel = MappingModel
/// Core Data's name for ``MappingModel/EntityMapping``.
public typealias NSEntityMapping = MappingModel.EntityMapping
