import Foundation

/// Reading the Foundation values of a Transformable attribute (what `NSSecureUnarchiveFromData`
/// allows: strings, numbers, dates, data, URLs, UUIDs, nulls, and arrays, sets and dictionaries of
/// them) with this module's own bounded archive reader rather than Foundation's
/// `NSKeyedUnarchiver`, which on Linux traps on crafted archives (the store fuzzer found one) and
/// has no bound on nesting or shared members. Column values come from files anyone can write.
extension KeyedArchive {
    /// How deep arrays, sets and dictionaries may nest in an archived value.
    package static let maximumFoundationValueDepth = 256

    /// The work (members of the expanded value) reading a value of `byteCount` bytes may do: each
    /// member of an archive is at least one byte of it, so the budget covers any archive without
    /// shared objects, shares within a few times its size, and refuses crafted sharing that would
    /// expand into gigabytes.
    package static func foundationValueBudget(byteCount: Int) -> Int { 100_000 + 4 * byteCount }

    /// The class names an archived value may use: the allowed classes of Core Data's secure
    /// unarchiving and their mutable kinds, as `NSKeyedArchiver` names them.
    fileprivate static let foundationClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSDictionary", "NSMutableDictionary",
        "NSString", "NSMutableString", "NSDate", "NSData", "NSMutableData", "NSURL", "NSUUID", "NSNull",
    ]

    /// Why an archive is not a Foundation value: another class, a damaged field, nesting or
    /// sharing beyond the bounds, or a cycle (which nests without end).
    fileprivate struct NotAFoundationValue: Error {}

    /// The root object as the app sees it: `String`, `NSNumber`, `Date`, `Data`, `URL`, `UUID`,
    /// `NSNull`, `[Any]`, `Set<AnyHashable>` or `[AnyHashable: Any]`; nil for a nil root and for an
    /// archive that holds anything else or is damaged (as Core Data's secure unarchiving).
    package func foundationValue() -> Any? {
        guard root != 0 else { return nil }
        var decoder = FoundationValueDecoder(archive: self)
        return try? decoder.value(.uid(root), depth: 0)
    }

    /// One walk over an archive. An object referred to many times is decoded once, as
    /// `NSKeyedUnarchiver` does, so memory grows with the archive, not with its expansion; but each
    /// reference charges the whole size of what it refers to, so the expanded value (what an app,
    /// `==` or archiving again walks) stays within the budget. An object met again while it is
    /// being decoded is a cycle.
    private struct FoundationValueDecoder {
        let archive: KeyedArchive
        /// Decoded objects by index, with the work their expansion cost.
        var decoded: [Int: (value: Any, size: Int)] = [:]
        var decoding: Set<Int> = []

        mutating func value(_ field: PropertyListValue?, depth: Int) throws(NotAFoundationValue) -> Any {
            guard depth < KeyedArchive.maximumFoundationValueDepth, archive.charge(1), let field else { throw NotAFoundationValue() }
            guard let index = field.uid else { return try archive.plainValue(field) }
            guard index > 0 else { throw NotAFoundationValue() } // a nil member of a collection
            if let known = decoded[index] {
                guard archive.charge(known.size) else { throw NotAFoundationValue() }
                return known.value
            }
            guard decoding.insert(index).inserted else { throw NotAFoundationValue() }
            let before = archive.workRemaining
            let value = try objectValue(at: index, depth: depth)
            decoding.remove(index)
            decoded[index] = (value, before - archive.workRemaining)
            return value
        }

        private mutating func objectValue(at index: Int, depth: Int) throws(NotAFoundationValue) -> Any {
            guard let object = archive.object(index) else { return try archive.plainValue(archive.value(.uid(index))) }
            guard KeyedArchive.foundationClassNames.contains(object.className) else { throw NotAFoundationValue() }
            func member(_ field: PropertyListValue?) throws(NotAFoundationValue) -> Any { try value(field, depth: depth + 1) }
            switch object.className {
            case "NSArray", "NSMutableArray":
                var array: [Any] = []
                for field in try archive.collection(object["NS.objects"]) { array.append(try member(field)) }
                return array
            case "NSSet", "NSMutableSet":
                var set = Set<AnyHashable>()
                for field in try archive.collection(object["NS.objects"]) { set.insert(try KeyedArchive.hashable(member(field))) }
                return set
            case "NSDictionary", "NSMutableDictionary":
                let keys = try archive.collection(object["NS.keys"]), values = try archive.collection(object["NS.objects"])
                guard keys.count == values.count else { throw NotAFoundationValue() }
                var dictionary: [AnyHashable: Any] = [:]
                for (key, field) in zip(keys, values) { dictionary[try KeyedArchive.hashable(member(key))] = try member(field) }
                return dictionary
            case "NSString", "NSMutableString":
                guard let string = try member(object["NS.string"]) as? String else { throw NotAFoundationValue() }
                return string
            case "NSData", "NSMutableData":
                guard let data = try member(object["NS.data"]) as? Data else { throw NotAFoundationValue() }
                return data
            case "NSDate":
                guard case .real(let seconds)? = object["NS.time"] else { throw NotAFoundationValue() }
                return try KeyedArchive.date(seconds)
            case "NSUUID":
                guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16 else { throw NotAFoundationValue() }
                return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            case "NSURL":
                guard let relative = try member(object["NS.relative"]) as? String else { throw NotAFoundationValue() }
                let base: URL?
                if object["NS.base"]?.uid == 0 {
                    base = nil
                } else {
                    guard let url = try member(object["NS.base"]) as? URL else { throw NotAFoundationValue() }
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
    }

    /// The members of an archived collection, counted against the work budget.
    fileprivate func collection(_ field: PropertyListValue?) throws(NotAFoundationValue) -> [PropertyListValue] {
        guard let members = field?.array, charge(members.count) else { throw NotAFoundationValue() }
        return members
    }

    /// A value stored inline in `$objects` or in a field: strings, numbers and data.
    fileprivate func plainValue(_ value: PropertyListValue?) throws(NotAFoundationValue) -> Any {
        switch value {
        case .string(let string)?: return string
        case .integer(let number)?: return NSNumber(value: number)
        case .unsignedInteger(let number)?: return NSNumber(value: number)
        case .real(let number)?: return NSNumber(value: number)
        case .bool(let flag)?: return NSNumber(value: flag)
        case .data(let bytes)?: return bytes
        case .date(let seconds)?: return try Self.date(seconds)
        default: throw NotAFoundationValue()
        }
    }

    /// A date: not NaN seconds, which no clock writes and which is not equal to itself (Foundation's
    /// archiver traps on a dictionary keyed by such a date when it meets the dictionary twice).
    fileprivate static func date(_ seconds: Double) throws(NotAFoundationValue) -> Date {
        guard !seconds.isNaN else { throw NotAFoundationValue() }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// A value as a set member or dictionary key: collections become their Foundation kinds,
    /// which are hashable (as the keys `NSKeyedUnarchiver` would have made).
    fileprivate static func hashable(_ value: Any) throws(NotAFoundationValue) -> AnyHashable {
        switch value {
        case let hashable as AnyHashable: return hashable
        case let array as [Any]: return AnyHashable(NSArray(array: array))
        case let dictionary as [AnyHashable: Any]: return AnyHashable(NSDictionary(dictionary: dictionary))
        default: throw NotAFoundationValue()
        }
    }
}
