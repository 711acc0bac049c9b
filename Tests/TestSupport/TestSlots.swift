import Foundation
import Synchronization

/// How many test cases run at once, each on its own thread (``DedicatedThreadTrait``).
///
/// Without a bound every test of the run would start at once, hundreds of threads on two cores,
/// and each test would take as long as the whole run. Twice the cores keeps both cores busy while
/// some tests wait on a process, a server or a sleep. A test waiting for a slot holds no thread:
/// it is a suspended task. `OCD_TEST_THREADS` sets the bound (for reproductions).
final class TestSlots: Sendable {
    static let shared = TestSlots(count: TestSlots.configuredCount)

    static var configuredCount: Int {
        if let text = ProcessInfo.processInfo.environment["OCD_TEST_THREADS"], let count = Int(text), count > 0 { return count }
        return max(2, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(free: count))
    }

    /// Waits, suspended, until a slot is free, and takes it.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
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
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
