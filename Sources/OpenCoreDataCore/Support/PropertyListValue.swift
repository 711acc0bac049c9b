import Foundation

/// A property-list value (string, number, boolean, data, date, and arrays and string-keyed
/// dictionaries of them) as a `Sendable` Swift value; `nil` for anything else. Metadata read
/// from a store or handed in by the app is kept in this form.
package func sendablePropertyListValue(_ value: Any) -> (any Sendable)? {
    switch value {
    case let v as String: v
    case let v as Int: v
    case let v as Double: v
    case let v as Bool: v
    case let v as Data: v
    case let v as Date: v
    case let v as [Any]: v.compactMap { sendablePropertyListValue($0) }
    case let v as [AnyHashable: Any]:
        Dictionary(v.compactMap { key, value in (key as? String).flatMap { k in sendablePropertyListValue(value).map { (k, $0) } } },
                   uniquingKeysWith: { a, _ in a })
    default: nil
    }
}
