/// Orders fetch results by one attribute. Core Data code spells it `NSSortDescriptor`
/// (an alias of this class), whose `init(key:ascending:)` Linux Foundation lacks.
///
/// ```swift
/// request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
/// ```
/// `nil` values sort first when ascending, as in SQLite; strings compare by their UTF-8 bytes.
public final class FetchSortDescriptor: Sendable, CustomStringConvertible, Equatable {
    /// The attribute to sort by.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// How strings compare, as the name of Core Data's selector: `compare:` (the default, by
    /// bytes), `caseInsensitiveCompare:`, `localizedStandardCompare:`,
    /// `localizedCaseInsensitiveCompare:`, `localizedCompare:`.
    public let selector: String?

    /// Makes a sort descriptor. Mirrors `NSSortDescriptor(key:ascending:)`.
    public init(key: String?, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
        self.selector = nil
    }

    /// Makes a sort descriptor that compares strings with a selector, given by name (Linux has no
    /// `#selector` for these): `NSSortDescriptor(key: "name", ascending: true,
    /// selector: "localizedStandardCompare:")`. Mirrors `init(key:ascending:selector:)`.
    public init(key: String?, ascending: Bool, selector: String) {
        self.key = key
        self.ascending = ascending
        self.selector = selector
    }

    /// Makes a sort descriptor from a key path of a `@Managed` class, as Xcode's templates write
    /// it: `NSSortDescriptor(keyPath: \Item.timestamp, ascending: true)`. A key path that names
    /// no modeled property (a computed one) keeps its description as the key, and the fetch that
    /// uses it fails naming it. Mirrors `init(keyPath:ascending:)`.
    public convenience init<Root: ManagedEntity, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(key: Root.makeEntityDescription().name(for: keyPath) ?? String(describing: keyPath), ascending: ascending)
    }

    /// The same key in the opposite order.
    public var reversedSortDescriptor: FetchSortDescriptor {
        selector.map { FetchSortDescriptor(key: key, ascending: !ascending, selector: $0) } ?? FetchSortDescriptor(key: key, ascending: !ascending)
    }

    public var description: String { "(\(key ?? "nil"), \(ascending ? "ascending" : "descending"))" }

    public static func == (lhs: FetchSortDescriptor, rhs: FetchSortDescriptor) -> Bool {
        lhs.key == rhs.key && lhs.ascending == rhs.ascending && (lhs.selector ?? "compare:") == (rhs.selector ?? "compare:")
    }
}
