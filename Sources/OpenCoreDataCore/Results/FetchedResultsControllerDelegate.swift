import Foundation

/// Told by a ``FetchedResultsController`` how its results changed, on the context's queue.
/// Mirrors `NSFetchedResultsControllerDelegate`; every method is optional (has a default).
///
/// For one change event the order is: `controllerWillChangeContent(_:)`, the section changes,
/// the object changes, `controllerDidChangeContent(_:)`. A delegate that implements
/// ``controller(_:didChangeContentWith:)`` gets the new snapshot instead, and nothing else.
///
/// The controller parameter is ``AnyFetchedResultsController`` (Core Data spells it
/// `NSFetchedResultsController<NSFetchRequestResult>`): the same instance as your typed
/// controller, so `controller === self.controller` holds.
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// Changes are about to be reported.
    func controllerWillChangeContent(_ controller: AnyFetchedResultsController)
    /// An object was inserted, deleted, moved or updated. Insertions have no `indexPath`,
    /// deletions no `newIndexPath`.
    func controller(_ controller: AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted (at its new index) or deleted (at its old index).
    func controller(_ controller: AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// Every change of this event has been reported.
    func controllerDidChangeContent(_ controller: AnyFetchedResultsController)
    /// The results as a snapshot of section names and object IDs. Implementing it replaces the
    /// other callbacks.
    func controller(_ controller: AnyFetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot)
    /// The index title of a section (by default its name's capitalised first letter).
    func controller(_ controller: AnyFetchedResultsController, sectionIndexTitleForSectionName sectionName: String) -> String?

    // Core Data's spelling (`NSFetchedResultsController<NSFetchRequestResult>`), so that delegate
    // code ported unchanged is called. Each passes the call on to the form above unless you
    // implement it. The controller given is the typed controller itself when its result type is
    // `NSFetchRequestResult`, else a view of it with the same results (`shownController` is the
    // typed one).

    /// Changes are about to be reported (Core Data's spelling).
    func controllerWillChangeContent(_ controller: FetchedResultsController<any FetchRequestResult>)
    /// An object changed (Core Data's spelling).
    func controller(_ controller: FetchedResultsController<any FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted or deleted (Core Data's spelling).
    func controller(_ controller: FetchedResultsController<any FetchRequestResult>, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// Every change of this event has been reported (Core Data's spelling).
    func controllerDidChangeContent(_ controller: FetchedResultsController<any FetchRequestResult>)
    /// The index title of a section (Core Data's spelling).
    func controller(_ controller: FetchedResultsController<any FetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: AnyFetchedResultsController) {}
    public func controller(_ controller: AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    public func controllerDidChangeContent(_ controller: AnyFetchedResultsController) {}
    public func controller(_ controller: AnyFetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot) {
        // Not implemented by the delegate: the controller sends the other callbacks.
        controller.delegateTakesSnapshots = false
    }
    public func controller(_ controller: AnyFetchedResultsController, sectionIndexTitleForSectionName sectionName: String) -> String? {
        controller.sectionIndexTitle(forSectionName: sectionName)
    }

    public func controllerWillChangeContent(_ controller: FetchedResultsController<any FetchRequestResult>) {
        controllerWillChangeContent(controller.shownController)
    }
    public func controller(_ controller: FetchedResultsController<any FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        self.controller(controller.shownController, didChange: anObject, at: indexPath, for: type, newIndexPath: newIndexPath)
    }
    public func controller(_ controller: FetchedResultsController<any FetchRequestResult>, didChange sectionInfo: any FetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        self.controller(controller.shownController, didChange: sectionInfo, atSectionIndex: sectionIndex, for: type)
    }
    public func controllerDidChangeContent(_ controller: FetchedResultsController<any FetchRequestResult>) {
        controllerDidChangeContent(controller.shownController)
    }
    public func controller(_ controller: FetchedResultsController<any FetchRequestResult>,
                           sectionIndexTitleForSectionName sectionName: String) -> String? {
        self.controller(controller.shownController, sectionIndexTitleForSectionName: sectionName)
    }
}
