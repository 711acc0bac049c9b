import Foundation

/// What a fetch request can return, as in Core Data's `NSFetchRequestResult`: managed objects,
/// object IDs, dictionaries, or a count.
///
/// | request | `resultType` | `fetch` returns |
/// |---|---|---|
/// | `FetchRequest<Note>` | `.managedObjectResultType` | `[Note]` |
/// | `FetchRequest<ManagedObjectID>(entityName:)` | `.managedObjectIDResultType` | `[ManagedObjectID]` |
/// | `FetchRequest<NSDictionary>(entityName:)` | `.dictionaryResultType` | `[NSDictionary]` (`propertiesToFetch`, grouping, aggregates) |
/// | `FetchRequest<NSNumber>(entityName:)` | `.countResultType` | `[NSNumber]` with one count |
///
/// The result type defaults from the generic parameter; setting it explicitly, as Core Data code
/// does, works too (a mismatch with the generic parameter is an error).
public protocol FetchRequestResult {}

extension ManagedObject: FetchRequestResult {}
extension ManagedObjectID: FetchRequestResult {}
extension NSDictionary: FetchRequestResult {}
extension NSNumber: FetchRequestResult {}

/// Mirrors `NSFetchRequestResultType`.
public enum FetchRequestResultType: UInt, Sendable {
    /// Managed objects (`NSManagedObjectResultType`).
    case managedObjectResultType = 0
    /// Object IDs (`NSManagedObjectIDResultType`).
    case managedObjectIDResultType = 1
    /// Dictionaries of property values (`NSDictionaryResultType`).
    case dictionaryResultType = 2
    /// One number: the count (`NSCountResultType`).
    case countResultType = 4
}

/// A computed column of a dictionary fetch: a key path, or an aggregate function over one.
/// Mirrors what Core Data users build with `NSExpressionDescription` and `NSExpression`.
///
/// ```swift
/// request.propertiesToFetch = ["text2", ExpressionDescription(name: "total", function: "sum:", keyPath: "id")]
/// request.propertiesToGroupBy = ["text2"]
/// ```
public final class ExpressionDescription: Sendable {
    /// The key of the value in each result dictionary.
    public let name: String
    /// `count:`, `sum:`, `min:`, `max:`, `average:`, or `nil` for the plain key path.
    public let function: String?
    /// The attribute the expression reads.
    public let keyPath: String

    /// A column computed by `function` over `keyPath`.
    public init(name: String, function: String?, keyPath: String) {
        self.name = name
        self.function = function
        self.keyPath = keyPath
    }
}

/// Core Data's name for the computed columns of dictionary fetches.
public typealias NSExpressionDescription = ExpressionDescription
