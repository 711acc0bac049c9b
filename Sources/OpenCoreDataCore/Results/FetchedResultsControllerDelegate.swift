import Foundation

/// Told by a ``FetchedResultsController`` how its results changed, on the context's queue.
/// Mirrors `NSFetchedResultsControllerDelegate`; every method is optional (has a default).
///
/// For one change event the order is: ``controllerWillChangeContent(_:)``, the section changes,
/// the object changes, ``controllerDidChangeContent(_:)``. A delegate that implements
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
}
