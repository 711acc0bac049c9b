import Foundation

/// A value of a binary property list (`bplist00`), as NSKeyedArchiver writes them: the plain
/// plist types plus UIDs (references between archived objects).
package enum PropertyListValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max` (written as 16 bytes, as Foundation writes `UInt64` values).
    case unsignedInteger(UInt64)
    case real(Double)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    case data(Data)
    case string(String)
    /// A reference to `$objects[n]` of a keyed archive.
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    package var string: String? { if case .string(let value) = self { value } else { nil } }
    package var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bool(let value): value ? 1 : 0
        default: nil
        }
    }
    package var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .integer(let value): value != 0
        default: nil
        }
    }
    package var uid: Int? { if case .uid(let value) = self { value } else { nil } }
    package var array: [PropertyListValue]? { if case .array(let value) = self { value } else { nil } }
    package var dictionary: [String: PropertyListValue]? { if case .dictionary(let value) = self { value } else { nil } }
}

/// Reads binary property lists, keeping UIDs (Foundation's reader on Linux does not expose
/// them, and keyed archives are made of them).
///
/// Layout: the `bplist00` header, the objects, an offset table, and a 32-byte trailer (offset
/// size, reference size, object count, top object, offset-table position).
///
/// Limits, for files nobody vouches for: containers nest at most ``maximumDepth`` deep (deeper
/// files are refused instead of overflowing the stack), and the decoded tree may hold at most as
/// many references as the file has bytes — a file whose objects share sub-objects so that they
/// expand beyond that (40 arrays each holding the next twice are 2^40 nodes) is refused. Each
/// object is decoded once and shared after that, so decoding costs time and memory in proportion
/// to the file.
package struct BinaryPropertyListReader {
    /// How deep containers may nest. Apple's writers produce a handful of levels; keyed archives
    /// are flat (objects refer to each other by UID, not by nesting).
    package static let maximumDepth = 256


    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let offsets: [Int]
    private let top: Int

    package init(_ data: Data) throws(CoreDataError) {
        bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else {
            throw Self.malformed("it does not start with bplist00")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = Self.unsigned(bytes, trailer + 8, 8)
        top = Self.unsigned(bytes, trailer + 16, 8)
        let table = Self.unsigned(bytes, trailer + 24, 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count <= bytes.count, top < count,
              table >= 8, table <= trailer, count * offsetSize <= trailer - table else {
            throw Self.malformed("its trailer is inconsistent")
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for index in 0..<count {
            let offset = Self.unsigned(bytes, table + index * offsetSize, offsetSize)
            guard offset >= 8, offset < table else { throw Self.malformed("object \(index) lies outside the object area") }
            offsets.append(offset)
        }
        self.offsets = offsets
    }

    /// The top object, decoded with everything it contains.
    package func root() throws(CoreDataError) -> PropertyListValue {
        var walk = Walk(objectCount: offsets.count, budget: bytes.count)
        return try value(at: top, walk: &walk)
    }

    /// The state of one decoding: objects on the current path (a cycle means a corrupt file),
    /// objects decoded so far with the number of nodes each expands to (decoded once, shared
    /// after), and how many more nodes the expanded tree may have.
    private struct Walk {
        var onPath: [Bool]
        var decoded: [(value: PropertyListValue, nodes: Int)?]
        var depth = 0
        var budget: Int

        init(objectCount: Int, budget: Int) {
            onPath = Array(repeating: false, count: objectCount)
            decoded = Array(repeating: nil, count: objectCount)
            self.budget = budget
        }

        /// Counts `nodes` more nodes of the expanded tree.
        mutating func expand(_ nodes: Int) throws(CoreDataError) {
            budget -= nodes
            guard budget >= 0 else {
                throw BinaryPropertyListReader.malformed("""
                    its objects share sub-objects so often that the decoded tree would be larger than the file \
                    allows
                    """)
            }
        }
    }

    private func value(at index: Int, walk: inout Walk) throws(CoreDataError) -> PropertyListValue {
        guard index < offsets.count else { throw Self.malformed("a reference points past the last object") }
        if let done = walk.decoded[index] {
            // Shared: its whole subtree appears once more in the expanded tree.
            try walk.expand(done.nodes)
            return done.value
        }
        try walk.expand(1)
        // Plain plists are trees; a cycle means a corrupt file.
        guard !walk.onPath[index] else { throw Self.malformed("object \(index) contains itself") }
        guard walk.depth < Self.maximumDepth else {
            throw Self.malformed("containers nest more than \(Self.maximumDepth) deep")
        }
        walk.onPath[index] = true
        walk.depth += 1
        defer { walk.onPath[index] = false; walk.depth -= 1 }
        let budgetBefore = walk.budget + 1
        let result = try decode(at: index, walk: &walk)
        walk.decoded[index] = (result, budgetBefore - walk.budget)
        return result
    }

    private func decode(at index: Int, walk: inout Walk) throws(CoreDataError) -> PropertyListValue {
        var position = offsets[index]
        let marker = bytes[position]
        let high = marker >> 4, low = Int(marker & 0x0f)
        position += 1
        switch high {
        case 0x0:
            switch low {
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: return .null
            }
        case 0x1:
            guard low <= 4 else { throw Self.malformed("an integer is wider than 128 bits") }
            let size = 1 << low
            try need(position, size)
            guard size == 16 else { return .integer(Self.signed(bytes, position, size)) }
            // 16-byte integers hold a 64-bit value in their low half: unsigned when the high half
            // is zero (Foundation's `UInt64` values above `Int64.max`), the low half otherwise.
            let lowHalf = Self.bits(bytes, position + 8, 8)
            return Self.bits(bytes, position, 8) == 0 && lowHalf > UInt64(Int64.max)
                ? .unsignedInteger(lowHalf)
                : .integer(Int64(bitPattern: lowHalf))
        case 0x2:
            guard low == 2 || low == 3 else { throw Self.malformed("a real is neither 4 nor 8 bytes") }
            let size = 1 << low
            try need(position, size)
            let raw = Self.bits(bytes, position, size)
            return .real(size == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) : Double(bitPattern: raw))
        case 0x3:
            try need(position, 8)
            return .date(Double(bitPattern: Self.bits(bytes, position, 8)))
        case 0x4:
            let count = try length(low, &position)
            try need(position, count)
            return .data(Data(bytes[position..<position + count]))
        case 0x5:
            let count = try length(low, &position)
            try need(position, count)
            return .string(String(decoding: bytes[position..<position + count], as: UTF8.self))
        case 0x6:
            let count = try length(low, &position)
            try need(position, count * 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for unit in 0..<count { units.append(UInt16(bytes[position + 2 * unit]) << 8 | UInt16(bytes[position + 2 * unit + 1])) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            guard low < 4 else { throw Self.malformed("a UID is wider than 32 bits") }
            try need(position, low + 1)
            return .uid(Self.unsigned(bytes, position, low + 1))
        case 0xA, 0xC:
            let count = try length(low, &position)
            try need(position, count * referenceSize)
            var items: [PropertyListValue] = []
            items.reserveCapacity(count)
            for item in 0..<count {
                items.append(try value(at: Self.unsigned(bytes, position + item * referenceSize, referenceSize), walk: &walk))
            }
            return .array(items)
        case 0xD:
            let count = try length(low, &position)
            try need(position, 2 * count * referenceSize)
            var entries: [String: PropertyListValue] = [:]
            for entry in 0..<count {
                let key = try value(at: Self.unsigned(bytes, position + entry * referenceSize, referenceSize), walk: &walk)
                guard let name = key.string else { throw Self.malformed("a dictionary key is not a string") }
                entries[name] = try value(at: Self.unsigned(bytes, position + (count + entry) * referenceSize, referenceSize), walk: &walk)
            }
            return .dictionary(entries)
        default:
            throw Self.malformed("object \(index) has the unknown marker 0x\(String(marker, radix: 16))")
        }
    }

    /// A collection's length: in the marker's low nibble, or (nibble 0xF) in a following integer.
    private func length(_ low: Int, _ position: inout Int) throws(CoreDataError) -> Int {
        guard low == 0xf else { return low }
        try need(position, 1)
        let marker = bytes[position]
        guard marker >> 4 == 0x1, marker & 0x0f <= 3 else { throw Self.malformed("a length is not an integer") }
        let size = 1 << Int(marker & 0x0f)
        try need(position + 1, size)
        let value = Self.unsigned(bytes, position + 1, size)
        // No collection or string can be longer than the file (this also keeps the products
        // computed from the length from overflowing).
        guard value >= 0, value <= bytes.count else { throw Self.malformed("a length is larger than the file") }
        position += 1 + size
        return value
    }

    private func need(_ position: Int, _ count: Int) throws(CoreDataError) {
        guard count >= 0, position <= bytes.count - 32, count <= bytes.count - 32 - position else {
            throw Self.malformed("an object runs past the end")
        }
    }

    /// A big-endian number of `size` ≤ 8 bytes as bits.
    private static func bits(_ bytes: [UInt8], _ position: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value = value << 8 | UInt64(bytes[position + index]) }
        return value
    }

    /// Offsets, references, counts: unsigned, and never negative as an `Int` (a value with the
    /// top bit set cannot be a position in the file and fails the range checks).
    private static func unsigned(_ bytes: [UInt8], _ position: Int, _ size: Int) -> Int {
        Int(truncatingIfNeeded: bits(bytes, position, size) & UInt64(Int.max))
    }

    private static func signed(_ bytes: [UInt8], _ position: Int, _ size: Int) -> Int64 {
        let value = bits(bytes, position, size)
        return size >= 8 ? Int64(bitPattern: value) : Int64(value)
    }

    fileprivate static func malformed(_ reason: String) -> CoreDataError {
        CoreDataError(.coreData, "The data is not a readable binary property list: \(reason).")
    }
}
