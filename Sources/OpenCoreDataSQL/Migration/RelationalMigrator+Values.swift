import Foundation
import OpenCoreDataCore

extension RelationalMigrator {
    /// A value of an old attribute as a value of the new attribute's type: kept when the type
    /// is the same; numbers, strings and dates converted where the meaning is kept; otherwise
    /// nil (the new attribute's default applies).
    static func convert(_ value: ManagedValue, from old: AttributeType, to new: AttributeType) -> ManagedValue {
        guard !value.isNull, old != new, let any = value.anyValue(for: old) else { return value }
        if let converted = ManagedValue(converting: any, to: new) { return converted }
        switch (any, new) {
        case (_, .string): return .string("\(any)")
        case (let text as String, .integer16), (let text as String, .integer32), (let text as String, .integer64):
            return Int64(text).flatMap { ManagedValue(converting: $0, to: new) } ?? .null
        case (let text as String, .double), (let text as String, .float):
            return Double(text).map { .double($0) } ?? .null
        case (let number as Double, .integer16), (let number as Double, .integer32), (let number as Double, .integer64):
            // Whole part when it fits; NaN, infinities and numbers past the type's range (values
            // another program may have written) become nil, never a trap.
            return Int64(exactly: number.rounded(.towardZero)).flatMap { ManagedValue(converting: $0, to: new) } ?? .null
        default: return .null
        }
    }
}
