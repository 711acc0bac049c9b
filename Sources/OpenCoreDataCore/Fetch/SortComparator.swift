import Foundation

/// How a sort descriptor compares strings: Core Data's sort selectors. The SQLite store
/// registers each as a collation that calls the same code, so stores and memory agree.
package enum SortComparator: Int, Sendable, CaseIterable {
    /// `compare:` — by UTF-8 bytes, as SQLite's BINARY collation.
    case binary = 0
    /// `caseInsensitiveCompare:`
    case caseInsensitive
    /// `localizedStandardCompare:` (Finder-like: case-insensitive, numbers by value)
    case localizedStandard
    /// `localizedCaseInsensitiveCompare:`
    case localizedCaseInsensitive
    /// `localizedCompare:`
    case localized

    /// The comparator for an Objective-C selector name (`"localizedStandardCompare:"`).
    package init?(selector: String) {
        switch selector {
        case "compare:", "compare": self = .binary
        case "caseInsensitiveCompare:", "caseInsensitiveCompare": self = .caseInsensitive
        case "localizedStandardCompare:", "localizedStandardCompare": self = .localizedStandard
        case "localizedCaseInsensitiveCompare:", "localizedCaseInsensitiveCompare": self = .localizedCaseInsensitive
        case "localizedCompare:", "localizedCompare": self = .localized
        default: return nil
        }
    }

    /// The SQLite collation that implements the comparator.
    package var collationName: String {
        switch self {
        case .binary: "BINARY"
        case .caseInsensitive: "OCD_CASEINSENSITIVE"
        case .localizedStandard: "OCD_LOCALIZEDSTANDARD"
        case .localizedCaseInsensitive: "OCD_LOCALIZEDCASEINSENSITIVE"
        case .localized: "OCD_LOCALIZED"
        }
    }

    package func compare(_ a: String, _ b: String) -> ComparisonResult {
        switch self {
        case .binary: ManagedValue.compare(.string(a), .string(b))
        case .caseInsensitive: a.caseInsensitiveCompare(b)
        case .localizedStandard: a.localizedStandardCompare(b)
        case .localizedCaseInsensitive: a.localizedCaseInsensitiveCompare(b)
        case .localized: a.localizedCompare(b)
        }
    }

    /// Orders two stored values: strings by this comparator, everything else as SQLite does.
    package func compare(_ a: ManagedValue, _ b: ManagedValue) -> ComparisonResult {
        if self != .binary, case .string(let x) = a, case .string(let y) = b { return compare(x, y) }
        return ManagedValue.compare(a, b)
    }
}
