import Foundation

/// What happened to an object or a section of a fetched results controller. Mirrors
/// `NSFetchedResultsChangeType`.
public enum FetchedResultsChangeType: UInt, Sendable {
    /// It joined the results (`newIndexPath` says where).
    case insert = 1
    /// It left the results (`indexPath` says from where).
    case delete = 2
    /// What it is sorted or sectioned by changed: from `indexPath` to `newIndexPath` (which may
    /// be equal). A move implies an update; none is sent besides.
    case move = 3
    /// It changed in place: `indexPath` before the batch, `newIndexPath` after it.
    case update = 4
}
