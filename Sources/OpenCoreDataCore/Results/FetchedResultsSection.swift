import Foundation

/// One section of a fetched results controller. Mirrors `NSFetchedResultsSectionInfo`.
public protocol FetchedResultsSectionInfo {
    /// The section's name: the value of the section key path shared by its objects ("" for nil).
    var name: String { get }
    /// The section's index title (by default the capitalised first letter of its name).
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section of a ``FetchedResultsController``'s results as they were when it was read.
public struct FetchedResultsSection: FetchedResultsSectionInfo {
    public let name: String
    public let indexTitle: String?
    public let numberOfObjects: Int
    /// The section's managed objects, in order.
    public let managedObjects: ArraySlice<ManagedObject>

    public var objects: [Any]? { Array(managedObjects) }
}
