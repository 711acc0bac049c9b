import Foundation

/// A named index over one or more properties of an entity, made in the store as
/// `Z_<Entity>_<name>`. Mirrors `NSFetchIndexDescription`.
///
/// ```swift
/// entity.indexes = [FetchIndexDescription(name: "byTitle", elements: [.init(property: "title")])]
/// ```
public struct FetchIndexDescription: Sendable, Hashable {
    /// One indexed property. Mirrors `NSFetchIndexElementDescription`.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name.
        public var propertyName: String
        /// Whether the index sorts ascending (Core Data's default).
        public var isAscending: Bool
        /// Makes an element.
        public init(property: String, ascending: Bool = true) {
            self.propertyName = property
            self.isAscending = ascending
        }
    }

    /// The index's name, part of the SQL index name.
    public var name: String
    /// The indexed properties, in index order.
    public var elements: [Element]

    /// Makes an index description.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
