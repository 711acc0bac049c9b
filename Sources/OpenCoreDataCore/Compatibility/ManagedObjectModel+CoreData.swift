import Foundation

extension ManagedObjectModel {
    /// Loads a model file (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`), or `nil` when it
    /// cannot. Mirrors Core Data's failable `NSManagedObjectModel(contentsOf:)`; use
    /// ``init(contentsOf:version:)`` to learn what is wrong with a file.
    public convenience init?(contentsOf url: URL) {
        do { try self.init(contentsOf: url, version: nil) } catch { return nil }
    }
}
