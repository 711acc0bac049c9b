import Foundation

/// Writes binary property lists (`bplist00`) with UIDs, the form of keyed archives.
///
/// Every node of the value becomes one object; strings are stored once each.
package struct BinaryPropertyListWriter {
    private var objects: [[UInt8]] = []
    private var strings: [String: Int] = [:]
    private var referenceSize = 1

    /// The encoded list.
    package static func data(_ root: PropertyListValue) -> Data {
        // References are sized for the number of objects, which is known only after a first pass.
        var counter = BinaryPropertyListWriter()
        counter.referenceSize = 4
        _ = counter.add(root)
        var writer = BinaryPropertyListWriter()
        writer.referenceSize = counter.objects.count < 256 ? 1 : counter.objects.count < 65_536 ? 2 : 4
        let top = writer.add(root)
        return writer.finish(top: top)
    }

    private mutating func add(_ value: PropertyListValue) -> Int {
        if case .string(let text) = value, let known = strings[text] { return known }
        let index = objects.count
        objects.append([])
        var bytes: [UInt8]
        switch value {
        case .null: bytes = [0x00]
        case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
        case .integer(let number): bytes = Self.integer(number)
        case .unsignedInteger(let number): bytes = [0x14] + Self.bigEndian(0, 8) + Self.bigEndian(number, 8)
        case .real(let number): bytes = [0x23] + Self.bigEndian(number.bitPattern, 8)
        case .date(let seconds): bytes = [0x33] + Self.bigEndian(seconds.bitPattern, 8)
        case .data(let data): bytes = Self.header(0x4, data.count) + [UInt8](data)
        case .string(let text):
            strings[text] = index
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                bytes = Self.header(0x5, text.utf8.count) + Array(text.utf8)
            } else {
                let units = Array(text.utf16)
                bytes = Self.header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
            }
        case .uid(let number):
            let size = number < 256 ? 1 : number < 65_536 ? 2 : 4
            bytes = [0x80 | UInt8(size - 1)] + Self.bigEndian(UInt64(number), size)
        case .array(let items):
            let references = items.map { add($0) }
            bytes = Self.header(0xA, items.count) + references.flatMap { Self.bigEndian(UInt64($0), referenceSize) }
        case .dictionary(let entries):
            let sorted = entries.sorted { $0.key < $1.key }
            let keys = sorted.map { add(.string($0.key)) }
            let values = sorted.map { add($0.value) }
            bytes = Self.header(0xD, sorted.count) + (keys + values).flatMap { Self.bigEndian(UInt64($0), referenceSize) }
        }
        objects[index] = bytes
        return index
    }

    private func finish(top: Int) -> Data {
        var output = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(output.count)
            output += object
        }
        let tableStart = output.count
        let offsetSize = tableStart < 256 ? 1 : tableStart < 65_536 ? 2 : tableStart < 1 << 32 ? 4 : 8
        for offset in offsets { output += Self.bigEndian(UInt64(offset), offsetSize) }
        output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        output += Self.bigEndian(UInt64(objects.count), 8) + Self.bigEndian(UInt64(top), 8) + Self.bigEndian(UInt64(tableStart), 8)
        return Data(output)
    }

    private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0xf] + integer(Int64(count))
    }

    private static func integer(_ number: Int64) -> [UInt8] {
        if number < 0 { return [0x13] + bigEndian(UInt64(bitPattern: number), 8) }
        if number < 1 << 8 { return [0x10, UInt8(number)] }
        if number < 1 << 16 { return [0x11] + bigEndian(UInt64(number), 2) }
        if number < 1 << 32 { return [0x12] + bigEndian(UInt64(number), 4) }
        return [0x13] + bigEndian(UInt64(number), 8)
    }

    private static func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8((value >> (8 * UInt64($0))) & 0xff) }
    }
}
