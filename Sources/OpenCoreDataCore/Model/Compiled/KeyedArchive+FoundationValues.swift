import Foundation

/// Reading the Foundation values of a Transformable attribute (what `NSSecureUnarchiveFromData`
/// allows: strings, numbers, dates, data, URLs, UUIDs, nulls, and arrays, sets and dictionaries of
/// them) with this module's own bounded archive reader rather than Foundation's
/// `NSKeyedUnarchiver`, which on Linux traps on crafted archives (the store fuzzer found one) and
/// has no bound on nesting or shared members. Column values come from files anyone can write.
extension KeyedArchive {
    /// How deep arrays, sets and dictionaries may nest in an archived value.
    package static let maximumFoundationValueDepth = 256

    /// The work (values made, members visited) reading a value of `byteCount` bytes may do: every
    /// member of a real archive is at least one byte of it, so the budget covers any archive whose
    /// members are not shared, and stops crafted sharing from expanding into gigabytes (at most a
    /// few hundred bytes of memory per byte of archive).
    package static func foundationValueBudget(byteCount: Int) -> Int { 100_000 + 4 * byteCount }

    /// The class names an archived value may use: the allowed classes of Core Data's secure
    /// unarchiving and their mutable kinds, as `NSKeyedArchiver` names them.
    private static let foundationClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSDictionary", "NSMutableDictionary",
        "NSString", "NSMutableString", "NSDate", "NSData", "NSMutableData", "NSURL", "NSUUID", "NSNull",
    ]

    /// Why an archive is not a Foundation value: another class, a damaged field, nesting or
    /// sharing beyond the bounds, or a cycle (which nests without end).
    private struct NotAFoundationValue: Error {}

    /// The root object as the app sees it: `String`, `NSNumber`, `Date`, `Data`, `URL`, `UUID`,
    /// `NSNull`, `[Any]`, `Set<AnyHashable>` or `[AnyHashable: Any]`; nil for a nil root and for an
    /// archive that holds anything else or is damaged (as Core Data's secure unarchiving).
    package func foundationValue() -> Any? {
        guard root != 0 else { return nil }
        return try? foundationValue(.uid(root), depth: 0)
    }

    private func foundationValue(_ field: PropertyListValue?, depth: Int) throws(NotAFoundationValue) -> Any {
        guard depth < Self.maximumFoundationValueDepth, charge(1), let field else { throw NotAFoundationValue() }
        guard let index = field.uid else { return try plainValue(field) }
        guard index > 0 else { throw NotAFoundationValue() } // a nil member of a collection
        guard let object = object(index) else { return try plainValue(self.value(.uid(index))) }
        guard Self.foundationClassNames.contains(object.className) else { throw NotAFoundationValue() }
        let value = { (field: PropertyListValue?) throws(NotAFoundationValue) -> Any in
            try self.foundationValue(field, depth: depth + 1)
        }
        switch object.className {
        case "NSArray", "NSMutableArray":
            return try collection(object["NS.objects"]).map(value)
        case "NSSet", "NSMutableSet":
            var set = Set<AnyHashable>()
            for member in try collection(object["NS.objects"]) { set.insert(try Self.hashable(value(member))) }
            return set
        case "NSDictionary", "NSMutableDictionary":
            let keys = try collection(object["NS.keys"]), values = try collection(object["NS.objects"])
            guard keys.count == values.count else { throw NotAFoundationValue() }
            var dictionary: [AnyHashable: Any] = [:]
            for (key, member) in zip(keys, values) { dictionary[try Self.hashable(value(key))] = try value(member) }
            return dictionary
        case "NSString", "NSMutableString":
            guard let string = try value(object["NS.string"]) as? String else { throw NotAFoundationValue() }
            return string
        case "NSData", "NSMutableData":
            guard let data = try value(object["NS.data"]) as? Data else { throw NotAFoundationValue() }
            return data
        case "NSDate":
            guard case .real(let seconds)? = object["NS.time"] else { throw NotAFoundationValue() }
            return Date(timeIntervalSinceReferenceDate: seconds)
        case "NSUUID":
            guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16 else { throw NotAFoundationValue() }
            return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case "NSURL":
            guard let relative = try value(object["NS.relative"]) as? String else { throw NotAFoundationValue() }
            let base: URL?
            if object["NS.base"]?.uid == 0 {
                base = nil
            } else {
                guard let url = try value(object["NS.base"]) as? URL else { throw NotAFoundationValue() }
                base = url
            }
            guard let url = URL(string: relative, relativeTo: base) else { throw NotAFoundationValue() }
            return url
        case "NSNull":
            return NSNull()
        default:
            throw NotAFoundationValue()
        }
    }

    /// The members of an archived collection, counted against the work budget.
    private func collection(_ field: PropertyListValue?) throws(NotAFoundationValue) -> [PropertyListValue] {
        guard let members = field?.array, charge(members.count) else { throw NotAFoundationValue() }
        return members
    }

    /// A value stored inline in `$objects` or in a field: strings, numbers and data.
    private func plainValue(_ value: PropertyListValue?) throws(NotAFoundationValue) -> Any {
        switch value {
        case .string(let string)?: return string
        case .integer(let number)?: return NSNumber(value: number)
        case .unsignedInteger(let number)?: return NSNumber(value: number)
        case .real(let number)?: return NSNumber(value: number)
        case .bool(let flag)?: return NSNumber(value: flag)
        case .data(let bytes)?: return bytes
        case .date(let seconds)?: return Date(timeIntervalSinceReferenceDate: seconds)
        default: throw NotAFoundationValue()
        }
    }

    /// A value as a set member or dictionary key: collections become their Foundation kinds,
    /// which are hashable (as the keys `NSKeyedUnarchiver` would have made).
    private static func hashable(_ value: Any) throws(NotAFoundationValue) -> AnyHashable {
        switch value {
        case let hashable as AnyHashable: return hashable
        case let array as [Any]: return AnyHashable(NSArray(array: array))
        case let dictionary as [AnyHashable: Any]: return AnyHashable(NSDictionary(dictionary: dictionary))
        default: throw NotAFoundationValue()
        }
    }
}
