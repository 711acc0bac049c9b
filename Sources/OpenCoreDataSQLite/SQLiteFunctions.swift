import CSQLite
import Foundation
import OpenCoreDataCore

/// SQL functions and collations registered on every connection, so that SQL evaluates string
/// operators and sort comparators with the very code the in-memory evaluator uses.
enum SQLiteFunctions {
    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "ocd_match", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, matchFunction, nil, nil, nil)
        // Called by the triggers Core Data's stores keep derived attributes current with
        // (`Z_DA_…`), to tell the framework the new value; without them, no row of such a table
        // could be written. The new value is read from the row like any other.
        for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
            sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, nil, ignoredFunction, nil, nil, nil)
        }
        for comparator in SortComparator.allCases where comparator != .binary {
            let context = UnsafeMutableRawPointer(bitPattern: comparator.rawValue + 1)
            sqlite3_create_collation_v2(db, comparator.collationName, SQLITE_UTF8, context, collationFunction, nil)
        }
    }

    /// `ocd_match(op, options, value, pattern)` → 1 or 0.
    private static let matchFunction: @convention(c) (OpaquePointer?, Int32,
                                                      UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, arguments in
        guard count == 4, let arguments, let op = StringMatching.op(code: sqlite3_value_int(arguments[0])) else {
            sqlite3_result_int(context, 0)
            return
        }
        let options = ComparisonOptions(rawValue: Int(sqlite3_value_int(arguments[1])))
        let value = text(arguments[2])
        let pattern = text(arguments[3]) ?? ""
        sqlite3_result_int(context, StringMatching.evaluate(op, options: options, value: value, pattern: pattern) ? 1 : 0)
    }

    /// A function whose call is all that matters: returns NULL.
    private static let ignoredFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
        sqlite3_result_null(context)
    }

    private static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    private static let collationFunction: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32,
                                                          UnsafeRawPointer?) -> Int32 = { context, lhsCount, lhs, rhsCount, rhs in
        let index = Int(bitPattern: context) - 1
        guard let comparator = SortComparator(rawValue: index) else { return 0 }
        let a = lhs.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(lhsCount)), as: UTF8.self) } ?? ""
        let b = rhs.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(rhsCount)), as: UTF8.self) } ?? ""
        switch comparator.compare(a, b) {
        case .orderedAscending: return -1
        case .orderedDescending: return 1
        case .orderedSame: return 0
        }
    }
}
