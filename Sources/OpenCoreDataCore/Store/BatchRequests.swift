import Foundation

/// A request executed by a store directly, bypassing contexts: `context.execute(request)`.
/// Mirrors `NSPersistentStoreRequest`.
public class PersistentStoreRequest {
    /// The entity the request works on.
    public let entityName: String
    /// The stores the request works on (`nil`: every store that holds the entity). Mirrors
    /// `affectedStores`.
    public var affectedStores: [PersistentStore]?
    init(entityName: String) { self.entityName = entityName }

    /// Starts the request on its own and returns its result at once (an asynchronous fetch), or
    /// `nil` for a request the context runs now. A method rather than a cast to a protocol: the
    /// first `as? any Protocol` of a request type in a process searches every conformance the
    /// process has (0.7 million instructions in the benchmark, a fifth of a batch delete).
    func startedOnItsOwn(in context: ManagedObjectContext) -> PersistentStoreResult? { nil }
}

/// What `context.execute(_:)` returns. Mirrors `NSPersistentStoreResult`.
public class PersistentStoreResult {
    /// The result in the form the request's `resultType` asked for: `true` (status), an `Int`
    /// count, or `[ManagedObjectID]`.
    public let result: Any?
    init(result: Any?) { self.result = result }
}

/// Inserts rows straight into the store, in one transaction, without making objects. Rows whose
/// values collide with a uniqueness constraint of the entity update the existing row instead
/// (upsert), so re-importing a feed never duplicates. Mirrors `NSBatchInsertRequest`.
///
/// ```swift
/// let request = BatchInsertRequest(entityName: "Quake", objects: rows)   // [[String: Any]]
/// request.resultType = .objectIDs
/// let ids = try context.execute(request).result as? [ManagedObjectID]
/// ```
public final class BatchInsertRequest: PersistentStoreRequest {
    /// What the result holds. Mirrors `NSBatchInsertRequestResultType`.
    public enum ResultType: UInt, Sendable {
        /// `true` on success.
        case statusOnly = 0
        /// The IDs of the inserted (or upserted) rows.
        case objectIDs = 1
        /// How many rows were inserted or updated.
        case count = 2
    }

    /// What `execute` returns in ``PersistentStoreResult/result``.
    public var resultType: ResultType = .statusOnly
    let source: Source

    enum Source {
        case rows([[String: Any]])
        case dictionaries((NSMutableDictionary) -> Bool)
        case objects((ManagedObject) -> Bool)
    }

    /// Inserts the given rows (attribute name → value).
    public init(entityName: String, objects: [[String: Any]]) {
        source = .rows(objects)
        super.init(entityName: entityName)
    }

    /// Inserts the given rows into `entity`. Mirrors `NSBatchInsertRequest(entity:objects:)`.
    public convenience init(entity: EntityDescription, objects: [[String: Any]]) {
        self.init(entityName: entity.name, objects: objects)
    }

    /// Inserts rows produced one at a time: the handler fills the dictionary and returns `true`
    /// when there are no more rows (that last dictionary is not inserted).
    public init(entity: EntityDescription, dictionaryHandler: @escaping (NSMutableDictionary) -> Bool) {
        source = .dictionaries(dictionaryHandler)
        super.init(entityName: entity.name)
    }

    /// Inserts rows produced one at a time through a scratch object of the entity's class: the
    /// handler sets its properties and returns `true` when there are no more rows.
    public init(entity: EntityDescription, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        source = .objects(managedObjectHandler)
        super.init(entityName: entity.name)
    }
}

/// Sets attributes of every matching row in the store, without making objects; each changed row's
/// version (`Z_OPT`) goes up, so contexts holding edited copies get a conflict at their next save.
/// Mirrors `NSBatchUpdateRequest`.
public final class BatchUpdateRequest: PersistentStoreRequest {
    /// What the result holds. Mirrors `NSBatchUpdateRequestResultType`.
    public enum ResultType: UInt, Sendable {
        /// `true` on success.
        case statusOnlyResultType = 0
        /// The IDs of the updated rows.
        case updatedObjectIDsResultType = 1
        /// How many rows were updated.
        case updatedObjectsCountResultType = 2
    }

    /// Which rows to update (`nil`: all of the entity).
    public var predicate: FetchPredicate?
    /// Attribute name → new constant value (`nil` / `NSNull` clears optional attributes).
    public var propertiesToUpdate: [String: Any]?
    /// What `execute` returns.
    public var resultType: ResultType = .statusOnlyResultType

    /// An update of the named entity's rows.
    public override init(entityName: String) {
        super.init(entityName: entityName)
    }

    /// An update of the named entity's rows matching `predicate`.
    public convenience init(entityName: String, predicate: FetchPredicate?, propertiesToUpdate: [String: Any]) {
        self.init(entityName: entityName)
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Deletes rows in the store, without making objects. Mirrors `NSBatchDeleteRequest`.
public final class BatchDeleteRequest: PersistentStoreRequest {
    /// What the result holds. Mirrors `NSBatchDeleteRequestResultType`.
    public enum ResultType: UInt, Sendable {
        /// `true` on success.
        case resultTypeStatusOnly = 0
        /// The IDs of the deleted rows.
        case resultTypeObjectIDs = 1
        /// How many rows were deleted.
        case resultTypeCount = 2
    }

    /// What `execute` returns.
    public var resultType: ResultType = .resultTypeStatusOnly
    let predicate: FetchPredicate?
    let objectIDs: [ManagedObjectID]?

    /// Deletes the rows a fetch request selects (its predicate; sort and window are ignored).
    public init<T>(fetchRequest: FetchRequest<T>) {
        predicate = fetchRequest.predicate
        objectIDs = nil
        super.init(entityName: fetchRequest.entity?.name ?? fetchRequest.entityName ?? "")
        affectedStores = fetchRequest.affectedStores
    }

    /// Deletes the given objects' rows (all of one entity's inheritance tree).
    public init(objectIDs: [ManagedObjectID]) {
        predicate = nil
        self.objectIDs = objectIDs
        super.init(entityName: objectIDs.first?.entity.rootEntity.name ?? "")
    }
}

/// The result of a ``BatchInsertRequest``. Mirrors `NSBatchInsertResult`.
public final class BatchInsertResult: PersistentStoreResult {}
/// The result of a ``BatchUpdateRequest``. Mirrors `NSBatchUpdateResult`.
public final class BatchUpdateResult: PersistentStoreResult {}
/// The result of a ``BatchDeleteRequest``. Mirrors `NSBatchDeleteResult`.
public final class BatchDeleteResult: PersistentStoreResult {}
