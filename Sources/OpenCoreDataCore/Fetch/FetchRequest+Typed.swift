import Foundation

extension FetchRequest where ResultType: ManagedEntity {
    /// A request written with Foundation's typed predicate and sort descriptors:
    ///
    /// ```swift
    /// let request = FetchRequest<Note>(predicate: #Predicate { $0.id > 10 && $0.text1 != nil },
    ///                                  sortBy: [SortDescriptor(\.id, order: .reverse)])
    /// ```
    /// The predicate is translated through the key paths `@Managed` recorded; a construct that
    /// cannot be translated is reported by `fetch` / `count` as a ``CoreDataError`` naming it.
    public convenience init(predicate: Predicate<ResultType>? = nil, sortBy: [SortDescriptor<ResultType>] = []) {
        self.init(entityName: ResultType.entityName)
        let entity = ResultType.makeEntityDescription()
        if let predicate {
            self.predicate = FetchPredicate(typed: predicate, entity: entity)
        }
        if !sortBy.isEmpty {
            self.sortDescriptors = sortBy.map { FetchSortDescriptor($0, entity: entity) }
        }
    }
}

extension FetchPredicate {
    /// Translates a typed predicate for an entity.
    package convenience init<T>(typed predicate: Predicate<T>, entity: EntityDescription) {
        do throws(CoreDataError) {
            self.init(node: try TypedPredicateConverter.node(for: predicate, entity: entity))
        } catch {
            self.init(failure: error, source: "#Predicate<\(T.self)>")
        }
    }
}

extension FetchSortDescriptor {
    /// Makes a sort descriptor from Foundation's `SortDescriptor` of a `@Managed` class, for a
    /// request's `sortDescriptors`: `request.sortDescriptors = [NSSortDescriptor(SortDescriptor(\Item.timestamp))]`.
    /// A key path that names no modeled property makes the fetch fail naming it. Mirrors
    /// `NSSortDescriptor(_:)`.
    public convenience init<T: ManagedEntity>(_ descriptor: SortDescriptor<T>) {
        self.init(descriptor, entity: T.makeEntityDescription())
    }

    /// Translates Foundation's `SortDescriptor` (key path, order, string comparator).
    package convenience init<T>(_ descriptor: SortDescriptor<T>, entity: EntityDescription) {
        let key = descriptor.keyPath.flatMap { entity.name(for: $0) } ?? descriptor.keyPath.map { "\($0)" } ?? "(a comparator without a key path)"
        let ascending = descriptor.order == .forward
        guard let comparator = descriptor.stringComparator else {
            self.init(key: key, ascending: ascending)
            return
        }
        var forward = comparator
        forward.order = .forward
        // `.lexical` compares as `compare:`; the localized comparators (`.localizedStandard`, the
        // default for String key paths on Apple platforms) as `localizedStandardCompare:`.
        let selector = forward == .lexical ? "compare:" : "localizedStandardCompare:"
        // A reverse comparator flips the order too.
        self.init(key: key, ascending: comparator.order == .forward ? ascending : !ascending, selector: selector)
    }
}
