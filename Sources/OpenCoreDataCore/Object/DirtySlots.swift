/// The set of attribute slots written since an object was last saved or fetched: a bit set.
package struct DirtySlots: Sendable, Equatable {
    private var words: [UInt64] = []

    package init() {}

    package var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    package mutating func insert(_ slot: Int) {
        let (word, bit) = slot.quotientAndRemainder(dividingBy: 64)
        if word >= words.count { words += Array(repeating: 0, count: word - words.count + 1) }
        words[word] |= 1 << UInt64(bit)
    }

    package func contains(_ slot: Int) -> Bool {
        let (word, bit) = slot.quotientAndRemainder(dividingBy: 64)
        return word < words.count && words[word] & (1 << UInt64(bit)) != 0
    }

    package mutating func removeAll() { words.removeAll(keepingCapacity: true) }

    /// The slots in ascending order.
    package var slots: [Int] {
        var result: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 { result.append(index * 64 + bit) }
        }
        return result
    }
}
