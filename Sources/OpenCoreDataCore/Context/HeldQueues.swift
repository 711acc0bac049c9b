import Foundation

/// Per thread: the context queues this thread holds while it waits in `ContextQueue.sync`.
enum HeldQueues {
    private static let key = "OpenCoreData.HeldQueues"

    static func contains(_ marker: UInt) -> Bool {
        (Thread.current.threadDictionary[key] as? [UInt])?.contains(marker) ?? false
    }

    static func push(_ marker: UInt) {
        let dictionary = Thread.current.threadDictionary
        dictionary[key] = ((dictionary[key] as? [UInt]) ?? []) + [marker]
    }

    /// Every queue this thread holds, innermost last.
    static var all: [UInt] {
        (Thread.current.threadDictionary[key] as? [UInt]) ?? []
    }

    static func pop() {
        let dictionary = Thread.current.threadDictionary
        var held = (dictionary[key] as? [UInt]) ?? []
        _ = held.popLast()
        dictionary[key] = held.isEmpty ? nil : held
    }
}
