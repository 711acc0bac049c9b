import Foundation

/// A description of which objects to fetch. A class, like `NSFetchRequest`.
///
/// ```swift
/// let request = Note.fetchRequest()                 // FetchRequest<Note>
/// request.predicate = NSPredicate(format: "id > %d", 10)
/// request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
/// request.fetchLimit = 20
/// let notes = try context.fetch(request)
/// ```
///
/// `ResultType` is one of the ``FetchRequestResult`` types, or an untyped request's
/// `any FetchRequestResult` (Core Data's `NSFetchRequest<NSFetchRequestResult>`), whose results
/// are what ``resultType`` asks for. (It is unconstrained because an existential does not conform
/// to its own protocol; other types make `fetch` throw.)
public final class FetchRequest<ResultType>: CustomStringConvertible {
    /// The name of the entity to fetch.
    public var entityName: String?
    /// The entity to fetch; when set it wins over ``entityName``.
    public var entity: EntityDescription?
    /// Which objects to return (`nil`: all).
    public var predicate: FetchPredicate?
    /// The order of the results (`nil`: unspecified, in practice primary-key order).
    public var sortDescriptors: [FetchSortDescriptor]?
    /// At most this many results (0: no limit).
    public var fetchLimit: Int = 0
    /// Skip this many results first.
    public var fetchOffset: Int = 0
    /// Whether unsaved inserts, changes and deletes of the context are taken into account.
    public var includesPendingChanges: Bool = true
    /// Whether objects of sub-entities are included.
    public var includesSubentities: Bool = true
    /// The stores to search (`nil`: every store that holds the entity). Unsaved objects count
    /// when the store they will be saved to is among them. Mirrors `affectedStores`.
    public var affectedStores: [PersistentStore]?
    /// Whether results may be returned as faults (recorded; rows come with the fetch, which is
    /// cheaper than a second round trip).
    public var returnsObjectsAsFaults: Bool = true
    /// Whether the fetch reads the objects' values; when `false` only their keys are read and the
    /// objects come back as faults that load on first use.
    public var includesPropertyValues: Bool = true
    /// Load objects this many at a time: ``ManagedObjectContext/fetchBatched(_:)`` keeps only the
    /// batch in use in memory. 0: no batching.
    public var fetchBatchSize: Int = 0
    /// Whether registered objects get the fetched values, replacing unchanged in-memory values.
    public var shouldRefreshRefetchedObjects: Bool = false
    /// Relationship key paths (`"folder"`, `"tags"`, `"folder.drawer"`) whose destinations are
    /// loaded with the results, one query per key path (and one for their rows), instead of one
    /// per object when they are first used.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// What `fetch` returns; defaults from the generic parameter (see ``FetchRequestResult``).
    public var resultType: FetchRequestResultType = FetchRequest.defaultResultType
    /// For dictionary results: attribute names (`String`) and ``ExpressionDescription``s; all
    /// attributes when `nil`.
    public var propertiesToFetch: [Any]?
    /// For dictionary results: drop duplicate dictionaries.
    public var returnsDistinctResults: Bool = false
    /// For dictionary results: group by these attribute names (every fetched plain property must
    /// be among them).
    public var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: keep the groups that match, evaluated on the result
    /// dictionaries (keys are the property and expression names).
    public var havingPredicate: FetchPredicate?

    /// Whether `ResultType` names no result type (`any FetchRequestResult`, `Any`, `AnyObject`):
    /// the request then returns what ``resultType`` asks for, managed objects by default.
    static var isUntyped: Bool { !(ResultType.self is any FetchRequestResult.Type) }

    private static var defaultResultType: FetchRequestResultType {
        if ResultType.self == ManagedObjectID.self { return .managedObjectIDResultType }
        if ResultType.self == NSDictionary.self { return .dictionaryResultType }
        if ResultType.self == NSNumber.self { return .countResultType }
        return .managedObjectResultType
    }

    /// Makes a request for the named entity. Mirrors `NSFetchRequest(entityName:)`.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// Makes a request for an entity description.
    public init(entity: EntityDescription) {
        self.entity = entity
        self.entityName = entity.name
    }

    public var description: String {
        var text = "FetchRequest<\(ResultType.self)>(\(entityName ?? entity?.name ?? "?")"
        if let predicate { text += ", predicate: \(predicate)" }
        if let sortDescriptors { text += ", sort: \(sortDescriptors)" }
        return text + ")"
    }
}

extension FetchRequest {
    /// The same request as `NSFetchRequest<NSFetchRequestResult>`: every setting copied.
    package func untypedCopy() -> FetchRequest<any FetchRequestResult> {
        let copy = FetchRequest<any FetchRequestResult>(entityName: entityName ?? entity?.name ?? "")
        copy.entity = entity
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.includesPendingChanges = includesPendingChanges
        copy.includesSubentities = includesSubentities
        copy.affectedStores = affectedStores
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.includesPropertyValues = includesPropertyValues
        copy.fetchBatchSize = fetchBatchSize
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.resultType = resultType
        copy.propertiesToFetch = propertiesToFetch
        copy.returnsDistinctResults = returnsDistinctResults
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        return copy
    }
}
