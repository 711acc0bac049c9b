public import Foundation

/// Which models a fetch returns, in what order, as SwiftData's `FetchDescriptor`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name.contains("Rome") },
///                                        sortBy: [SortDescriptor(\.start, order: .reverse)])
/// descriptor.fetchLimit = 10
/// let trips = try context.fetch(descriptor)
/// ```
/// The predicate and the sort run in SQL, through relationships (`$0.trip?.name == "Rome"`),
/// `contains(where:)` over a to-many, optionals, `??` and the ternary operator.
public struct FetchDescriptor<T: PersistentModel> {
    /// Which models (nil: all).
    public var predicate: Predicate<T>?
    /// The order of the results.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many results (nil: no limit).
    public var fetchLimit: Int?
    /// Skip this many results first.
    public var fetchOffset: Int?
    /// Whether unsaved inserts, changes and deletes of the context count (true by default).
    public var includePendingChanges: Bool = true
    /// The properties to read (a hint: every persisted property is read with the row here, which
    /// costs one query as the hint does).
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// Relationships whose destinations are read with the results, one query per relationship,
    /// instead of one per model when first used.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// A descriptor of the models matching `predicate`, in the order of `sortBy`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}
