import Foundation

extension ManagedValue {
    /// Orders two stored values the way SQLite orders the columns that hold them: `nil` first,
    /// numbers by value, strings by their UTF-8 bytes (SQLite's `BINARY` collation), data by
    /// bytes. Values of unrelated kinds order by kind; an unsaved NaN (which saves refuse) orders
    /// as `nil`, keeping the order total. Used by in-memory sorting and predicates so that they
    /// agree with the SQLite store.
    public static func compare(_ lhs: ManagedValue, _ rhs: ManagedValue) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        default: break
        }
        if let a = lhs.numericValue, let b = rhs.numericValue {
            if case .integer(let x) = lhs, case .integer(let y) = rhs { return order(x, y) }
            if a.isNaN || b.isNaN { return a.isNaN == b.isNaN ? .orderedSame : (a.isNaN ? .orderedAscending : .orderedDescending) }
            return order(a, b)
        }
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return compareUTF8(a, b)
        case (.url(let a), .url(let b)): return compareBytes(Array(a.absoluteString.utf8), Array(b.absoluteString.utf8))
        case (.data(let a), .data(let b)): return compareBytes(Array(a), Array(b))
        case (.uuid(let a), .uuid(let b)): return compareBytes(a.bytes, b.bytes)
        case (.object(let a), .object(let b)):
            // As the store compares foreign keys: by primary key (unsaved objects last).
            return a == b ? .orderedSame : order(a.primaryKey ?? .max, b.primaryKey ?? .max)
        default: return order(lhs.kindRank, rhs.kindRank)
        }
    }

    /// The value as a number, for numeric kinds (dates count as seconds since 2001, as stored).
    package var numericValue: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .bool(let v): v ? 1 : 0
        case .double(let v): v
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
        case .date(let v): v.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .integer, .bool, .double, .decimal, .date: 1
        case .string, .url: 2
        case .data, .uuid: 3
        case .object: 4
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }

    /// Two strings by their UTF-8 bytes, read in place (no copies for native strings).
    private static func compareUTF8(_ a: String, _ b: String) -> ComparisonResult {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let xBase = x.baseAddress, let yBase = y.baseAddress {
                    let difference = memcmp(xBase, yBase, common)
                    if difference != 0 { return difference < 0 ? .orderedAscending : .orderedDescending }
                }
                return order(x.count, y.count)
            }
        }
    }

    private static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }
}

extension UUID {
    /// The 16 bytes of the UUID, as Core Data stores them.
    package var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// Makes a UUID from 16 stored bytes.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let b = Array(bytes)
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
