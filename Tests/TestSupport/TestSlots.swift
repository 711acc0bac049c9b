import Foundation

/// How many test cases run at once, each on its own thread (``DedicatedThreadTrait``).
///
/// Without a bound every test of the run would start at once, hundreds of threads on two cores,
/// and each test would take as long as the whole run. Twice the cores keeps both cores busy while
/// some tests wait on a process, a server or a sleep. A test waiting for a slot holds no thread:
/// it is a suspended task. `OCD_TEST_THREADS` sets the bound (for reproductions).
// @unchecked Sendable: `state` is only touched under `lock` (an NSLock, a pthread mutex the
// thread sanitizer understands; Synchronization's `Mutex` is a futex on Linux that it cannot see).
final class TestSlots: @unchecked Sendable {
    static let shared = TestSlots(count: TestSlots.configuredCount)

    static var configuredCount: Int {
        if let text = ProcessInfo.processInfo.environment["OCD_TEST_THREADS"], let count = Int(text), count > 0 { return count }
        return max(2, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let lock = NSLock()
    private var state: State

    init(count: Int) {
        state = State(free: count)
    }

    /// Waits, suspended, until a slot is free, and takes it.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = lock.withLock {
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives the slot to the longest waiter, or back.
    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
