/// The set of attribute slots written since an object was last saved or fetched: a bit set,
/// inline for the first 64 slots (no allocation per object), spilling to an array beyond.
package struct DirtySlots: Sendable, Equatable {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    package init() {}

    package var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    package mutating func insert(_ slot: Int) {
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let (word, bit) = (slot - 64).quotientAndRemainder(dividingBy: 64)
        if word >= high.count { high += Array(repeating: 0, count: word - high.count + 1) }
        high[word] |= 1 << UInt64(bit)
    }

    package func contains(_ slot: Int) -> Bool {
        if slot < 64 { return low & (1 << UInt64(slot)) != 0 }
        let (word, bit) = (slot - 64).quotientAndRemainder(dividingBy: 64)
        return word < high.count && high[word] & (1 << UInt64(bit)) != 0
    }

    package mutating func remove(_ slot: Int) {
        if slot < 64 {
            low &= ~(1 << UInt64(slot))
            return
        }
        let (word, bit) = (slot - 64).quotientAndRemainder(dividingBy: 64)
        if word < high.count { high[word] &= ~(1 << UInt64(bit)) }
    }

    /// The first 32 slots, one bit each.
    package var first32: UInt32 { UInt32(truncatingIfNeeded: low) }

    /// The slots past the 32nd.
    package var beyond32: DirtySlots {
        var rest = self
        rest.low &= ~UInt64(UInt32.max)
        return rest
    }

    /// Adds the first-32 slots of a bit word.
    package mutating func insertFirst32(_ bits: UInt32) {
        low |= UInt64(bits)
    }

    package mutating func removeAll() {
        low = 0
        if !high.isEmpty { high.removeAll() }
    }

    /// The slots in ascending order.
    package var slots: [Int] {
        var result: [Int] = []
        result.reserveCapacity(low.nonzeroBitCount)
        Self.append(low, base: 0, to: &result)
        for (index, word) in high.enumerated() where word != 0 { Self.append(word, base: (index + 1) * 64, to: &result) }
        return result
    }

    /// Appends the set bits of one word, lowest first (one step per set bit, not per bit).
    private static func append(_ word: UInt64, base: Int, to result: inout [Int]) {
        var rest = word
        while rest != 0 {
            result.append(base + rest.trailingZeroBitCount)
            rest &= rest - 1
        }
    }
}
