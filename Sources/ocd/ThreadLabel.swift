import Foundation
import Synchronization

/// Short, stable names for the threads the demo sees ("caller", "T1", "T2", …).
final class ThreadLabels: Sendable {
    private let names = Mutex<[ObjectIdentifier: String]>([:])

    /// Names the current thread `name` (call once from the thread to name).
    func name(_ name: String) {
        let id = ObjectIdentifier(Thread.current)
        names.withLock { $0[id] = name }
    }

    /// The current thread's name, assigning the next `T<n>` the first time a thread is seen.
    func current() -> String {
        let id = ObjectIdentifier(Thread.current)
        return names.withLock { names in
            if let name = names[id] { return name }
            let name = "T\(names.count)"
            names[id] = name
            return name
        }
    }
}
