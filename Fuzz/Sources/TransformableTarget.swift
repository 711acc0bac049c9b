import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The default transformer (`NSSecureUnarchiveFromData`) on raw bytes: a Transformable
/// attribute's stored value, which a store copied off a device brings from anywhere (seeds: keyed
/// archives of every allowed kind, and the archived values of the fixture stores).
struct TransformableTarget: FuzzTarget {
    let transformer = SecureUnarchiveFromDataTransformer()

    func run(_ input: Data) throws {
        guard let value = transformer.reverseTransformedValue(input) else { return }
        // What was read is a value of the allowed kinds: it archives again, and reads back.
        guard let again = transformer.transformedValue(value) else { fail("a value read from an archive does not archive again: \(type(of: value))") }
        guard transformer.reverseTransformedValue(again) != nil else { fail("a value archived again does not read back: \(type(of: value))") }
    }
}
