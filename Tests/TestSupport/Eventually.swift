import Foundation

/// Waits, suspended, until `condition` holds or `timeLimit` has passed; returns whether it held.
///
/// For what another queue, thread or process does in its own time (a merge on the main queue, a
/// remote-change notification, a child process's import). The limit is sized for a loaded
/// two-core machine, not for how long the work should take: a test that waits for it is
/// checking that something happens, not how fast.
package func eventually(within timeLimit: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeLimit
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}
