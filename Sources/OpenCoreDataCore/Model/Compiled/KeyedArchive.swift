import Foundation

/// An NSKeyedArchiver archive (a binary plist with `$objects`, `$top`, `$archiver`): the form of
/// compiled models (`.mom`), of `Z_MODELCACHE` and of mapping models (`.cdm`).
///
/// Objects are addressed by their index in `$objects`; UID 0 is nil. The object graph may be
/// cyclic (model ↔ entity, relationship ↔ inverse), so readers memoise by index.
///
/// Walks are bounded in depth by their callers and in breadth here: every member, entry and
/// expression node a reader visits is counted against a budget proportional to the archive's size
/// (``workBudget(objectCount:)``), so an archive whose objects share members so that a walk would
/// expand without end stops early, and ``isExhausted`` tells the reader to refuse it.
package struct KeyedArchive {
    private let objects: [PropertyListValue]
    /// The index of the root object (`$top.root`).
    package let root: Int
    private let work: WorkCounter

    /// The work a walk of an archive of `objectCount` objects may do: generous for real models
    /// (each entity reads its own and its parent's properties a few times), bounded for crafted ones.
    package static func workBudget(objectCount: Int) -> Int { 1_000_000 + 64 * objectCount }

    /// Counts the work of the walks over one archive. Owned by the one reader that walks it
    /// (archives are read on one thread and not shared).
    private final class WorkCounter {
        var left: Int
        init(_ budget: Int) { left = budget }
    }

    /// Whether a walk ran out of budget: what the reader built is incomplete, and the archive
    /// should be refused as malformed.
    package var isExhausted: Bool { work.left < 0 }

    /// The work left in the budget (negative once spent).
    package var workRemaining: Int { work.left }

    /// Counts `units` of work; false once the budget is spent.
    package func charge(_ units: Int) -> Bool {
        work.left -= units
        return work.left >= 0
    }

    /// Reads the archive in `data`; `workBudget` replaces the default budget of
    /// ``workBudget(objectCount:)`` for walks that materialise what they visit.
    package init(_ data: Data, workBudget: Int? = nil) throws(CoreDataError) {
        guard case .dictionary(let top) = try BinaryPropertyListReader(data).root(),
              top["$archiver"]?.string == "NSKeyedArchiver", let objects = top["$objects"]?.array,
              let root = top["$top"]?.dictionary?["root"]?.uid, root < objects.count else {
            throw CoreDataError(.coreData, "The data is not an NSKeyedArchiver archive (no $archiver, $objects or $top.root).")
        }
        self.objects = objects
        self.root = root
        work = WorkCounter(workBudget ?? Self.workBudget(objectCount: objects.count))
    }

    /// The archived object at `index`: its class chain and its fields.
    package func object(_ index: Int) -> ArchivedObject? {
        guard index > 0, index < objects.count, case .dictionary(let fields) = objects[index],
              let classIndex = fields["$class"]?.uid, classIndex < objects.count,
              case .dictionary(let classInfo) = objects[classIndex] else { return nil }
        let classes = classInfo["$classes"]?.array?.compactMap(\.string) ?? []
        return ArchivedObject(index: index, className: classInfo["$classname"]?.string ?? classes.first ?? "", classes: classes, fields: fields)
    }

    /// The object a field refers to (nil for UID 0 or a missing key).
    package func object(_ field: PropertyListValue?) -> ArchivedObject? {
        field?.uid.flatMap(object)
    }

    /// The plain value a field refers to: a string, number, data, or the plain value of a
    /// Foundation object (`NSMutableString`, `NSData`, `NSDate`, `NSUUID`, `NSURL`).
    package func value(_ field: PropertyListValue?) -> PropertyListValue? {
        value(field, depth: 0)
    }

    // A damaged archive may refer an object to itself; four levels are more than any
    // Foundation value needs.
    private func value(_ field: PropertyListValue?, depth: Int) -> PropertyListValue? {
        guard let field, depth < 4 else { return nil }
        guard let index = field.uid else { return field }
        guard index > 0, index < objects.count else { return nil }
        if let object = object(index) {
            if let string = object.fields["NS.string"] { return value(string, depth: depth + 1) }
            if let bytes = object.fields["NS.bytes"] ?? object.fields["NS.data"] { return value(bytes, depth: depth + 1) }
            if let time = object.fields["NS.time"], case .real(let seconds) = time { return .date(seconds) }
            if let uuid = object.fields["NS.uuidbytes"] { return value(uuid, depth: depth + 1) }
            if object.className == "NSURL", let relative = object.fields["NS.relative"] { return value(relative, depth: depth + 1) }
            return nil
        }
        return objects[index]
    }

    /// A string field (`NSString` or `NSMutableString`).
    package func string(_ field: PropertyListValue?) -> String? { value(field)?.string }

    /// The member indexes of an archived `NSArray`/`NSSet` (and their mutable kinds).
    package func members(_ field: PropertyListValue?) -> [Int] {
        guard let members = object(field)?.fields["NS.objects"]?.array, charge(1 + members.count) else { return [] }
        return members.compactMap(\.uid)
    }

    /// The entries of an archived dictionary: `NSDictionary` (`NS.keys`/`NS.objects`) or
    /// `NSKnownKeysDictionary1` (keys in its search mapping, values parallel to them, empty slots
    /// marked by its empty token). Values are object indexes.
    package func entries(_ field: PropertyListValue?) -> [(key: String, value: Int)] {
        guard let dictionary = object(field), charge(1) else { return [] }
        if let keys = dictionary.fields["NS.keys"]?.array, let values = dictionary.fields["NS.objects"]?.array {
            guard charge(min(keys.count, values.count)) else { return [] }
            return zip(keys, values).compactMap { key, value in
                guard let name = string(key), let index = value.uid else { return nil }
                return (name, index)
            }
        }
        guard let mapping = object(dictionary.fields["searchMapping"]) else { return [] }
        let keys = members(mapping.fields["keys"]).compactMap { string(.uid($0)) }
        let values = members(dictionary.fields["values"])
        let empty = string(dictionary.fields["emptyToken"])
        return zip(keys, values).compactMap { key, value in
            if let empty, string(.uid(value)) == empty { return nil }
            return (key, value)
        }
    }
}

/// One archived object: its class (most derived first) and its fields, whose object values are
/// UIDs and whose `encodeInt`/`encodeBool` values are inline.
package struct ArchivedObject {
    package let index: Int
    package let className: String
    package let classes: [String]
    package let fields: [String: PropertyListValue]

    package subscript(_ key: String) -> PropertyListValue? { fields[key] }

    /// Whether the object is of `name` or one of its subclasses.
    package func isKind(of name: String) -> Bool { classes.contains(name) || className == name }
}
