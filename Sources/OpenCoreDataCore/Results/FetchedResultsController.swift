import Foundation

/// A fetch request's results that follow their context: after every change the context is told
/// about — its own edits at `processPendingChanges()`, saves, merges from other contexts, the
/// parent or the store's history, `refresh`, `rollback`, `reset`, undo — the results equal a
/// fresh fetch, and the delegate hears what changed, in sections. Mirrors
/// `NSFetchedResultsController`.
///
/// ```swift
/// let request = Quake.fetchRequest()
/// request.sortDescriptors = [NSSortDescriptor(key: "magnitude", ascending: false)]
/// let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
///                                           sectionNameKeyPath: "magnitudeBand", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// let strongest = controller.object(at: IndexPath(item: 0, section: 0))
/// ```
///
/// The request needs at least one sort descriptor; with a section key path the first one must
/// order the sections. Use the controller on its context's queue.
open class FetchedResultsController<ResultType>: AnyFetchedResultsController {
    /// The request whose results are kept current. Change its predicate or sort descriptors,
    /// then call ``AnyFetchedResultsController/performFetch()`` again.
    public let fetchRequest: FetchRequest<ResultType>

    /// A controller for a request in a context; `sectionNameKeyPath` names the attribute (or a
    /// key path through to-one relationships) that groups the results into sections.
    /// `cacheName` is accepted and kept (see ``AnyFetchedResultsController/cacheName``).
    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext context: ManagedObjectContext,
                sectionNameKeyPath: String? = nil, cacheName name: String? = nil) {
        self.fetchRequest = fetchRequest
        super.init(context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name) { [unowned context] in
            try LiveResults(request: fetchRequest, context: context, sectionNameKeyPath: sectionNameKeyPath, sectionName: nil)
        }
    }

    /// A controller whose sections are named by a function of each object (Core Data code uses a
    /// transient attribute for this, e.g. a name's first letter). The names must follow the
    /// request's order: objects of one section together.
    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext context: ManagedObjectContext,
                sectionName: @escaping (ResultType) -> String) {
        self.fetchRequest = fetchRequest
        super.init(context: context, sectionNameKeyPath: nil, cacheName: nil) { [unowned context] in
            try LiveResults(request: fetchRequest, context: context, sectionNameKeyPath: nil,
                            sectionName: { object in (object as? ResultType).map(sectionName) ?? "" })
        }
    }

    /// A view of another controller, for delegate methods written with Core Data's spelling.
    init(viewOf controller: AnyFetchedResultsController, request: FetchRequest<ResultType>) {
        self.fetchRequest = request
        super.init(viewOf: controller)
    }

    override package func requestForView() -> FetchRequest<any FetchRequestResult> {
        fetchRequest.untypedCopy()
    }

    /// The controller whose delegate is being told: this one, or — when this is the view handed
    /// to a delegate method spelled with `NSFetchedResultsController<NSFetchRequestResult>` — the
    /// typed controller it shows. Compare it with your controller to tell several apart.
    public var shownController: AnyFetchedResultsController { shown ?? self }

    /// The results, or `nil` before ``AnyFetchedResultsController/performFetch()``. Read again after a change: the array
    /// you hold does not change.
    public var fetchedObjects: [ResultType]? {
        guard let objects = fetchedManagedObjects else { return nil }
        // The request was checked to return objects of ResultType's class (or subclasses).
        if ResultType.self is ManagedObject.Type { return unsafeBitCast(objects, to: [ResultType].self) }
        return objects.compactMap { $0 as? ResultType }
    }

    /// The object at an index path. An index path outside the results is a programming error.
    public func object(at indexPath: IndexPath) -> ResultType {
        let object = managedObject(at: indexPath)
        guard let typed = object as? ResultType else {
            preconditionFailure("The object at \(indexPath) is a \(type(of: object)), not a \(ResultType.self).")
        }
        return typed
    }
}
