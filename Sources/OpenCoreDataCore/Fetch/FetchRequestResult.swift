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
/// Mirrors `NSExpressionDescription`, in Core Data's spelling or in one line:
///
/// ```swift
/// request.propertiesToFetch = ["text2", ExpressionDescription(name: "total", function: "sum:", keyPath: "id")]
/// request.propertiesToGroupBy = ["text2"]
///
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "id")])
/// total.expressionResultType = .doubleAttributeType
/// ```
/// Configured before the request that holds it is used, like the request itself.
public final class ExpressionDescription {
    /// The key of the value in each result dictionary.
    public var name: String
    /// What the column computes.
    public var expression: FetchExpression?
    /// The type of the results: a sum of integers asked as `.double` comes back as a `Double`.
    /// `nil` (the default of ``init()``) keeps the type the function gives (`count:` an
    /// `Int64`, `sum:` of integers an `Int64`, `average:` a `Double`, `min:`/`max:` the
    /// attribute's). Mirrors `expressionResultType` (whose "undefined" is `nil` here).
    public var expressionResultType: AttributeType?

    /// An empty description, as Core Data's `init()`: set ``name`` and ``expression``.
    public init() {
        name = ""
    }

    /// A column computed by `function` (`count:`, `sum:`, `min:`, `max:`, `average:`, or `nil`
    /// for the plain value) over `keyPath`.
    public convenience init(name: String, function: String?, keyPath: String) {
        self.init()
        self.name = name
        let path = FetchExpression(forKeyPath: keyPath)
        expression = function.map { FetchExpression(forFunction: $0, arguments: [path]) } ?? path
    }

    /// The function, or `nil` for a plain key path.
    public var function: String? {
        expression?.expressionType == .function ? expression?.function : nil
    }

    /// The key path the expression reads ("" when it reads none).
    public var keyPath: String {
        guard let expression else { return "" }
        return expression.expressionType == .function ? expression.arguments?.first?.keyPath ?? "" : expression.keyPath
    }
}

/// Core Data's name for the computed columns of dictionary fetches.
public typealias NSExpressionDescription = ExpressionDescription
