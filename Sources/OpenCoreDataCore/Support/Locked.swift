import Foundation

/// A value guarded by a lock: the one owner of state shared between threads.
package final class Locked<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written inside `withLock`, under `lock`. The lock is what
    // makes each access exclusive, so the run-time exclusivity check is skipped: it cost a
    // record per access (about 80 instructions), paid by every row-cache lookup and
    // coordinator read.
    private let lock = NSLock()
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
