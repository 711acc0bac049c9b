import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The binary-plist reader on raw bytes (seeds: compiled models and the metadata plists of the
/// fixture stores).
struct PropertyListTarget: FuzzTarget {
    func run(_ input: Data) throws {
        let value = try BinaryPropertyListReader(input).root()
        // What was read writes back and reads back the same.
        let again = try BinaryPropertyListReader(BinaryPropertyListWriter.data(value)).root()
        guard again == value || !Self.isComparable(value) else { fail("a plist read back differently after writing") }
    }

    /// NaN is not equal to itself: lists holding one cannot be compared.
    private static func isComparable(_ value: PropertyListValue) -> Bool {
        switch value {
        case .real(let number), .date(let number): !number.isNaN
        case .array(let items): items.allSatisfy(isComparable)
        case .dictionary(let entries): entries.values.allSatisfy(isComparable)
        default: true
        }
    }
}
