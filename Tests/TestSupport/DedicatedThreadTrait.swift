import Foundation
import Testing

/// Runs each test case on a thread of its own, off Swift's cooperative pool, and fails it when
/// its own run (not its wait to start) exceeds a time limit.
///
/// Every suite carries it (`.ci/lint-tests` checks): `@Suite(.dedicatedThread)`, or
/// `.dedicatedThread(minutes: 15)` for a long suite.
///
/// Why: Swift Testing runs tests as tasks on the cooperative pool, which has as many threads as
/// cores. Tests that block those threads (`performAndWait`, `concurrentPerform`, semaphores,
/// waiting on a process) kept every other test from starting, and Swift Testing's `.timeLimit`
/// counts from the moment a test is scheduled, so tests that had not run yet failed on time
/// (docs/Testing.md shows the reproduction). Here a case first waits, suspended, for one of
/// ``TestSlots``; its limit starts when it has one and its thread.
///
/// A case past its limit is recorded as failing at once (with its name, so a deadlock is visible
/// in the log); if it still has not returned after a grace period, the test process ends, so a
/// deadlocked test cannot hang the run.
package struct DedicatedThreadTrait: SuiteTrait, TestTrait, TestScoping {
    /// The longest a test case may run once started.
    package let timeLimit: Duration
    /// How long past the limit a case may go on before the process is ended.
    package static let grace: Duration = .seconds(120)

    /// Inherited by every test and test case of a suite that carries it.
    package var isRecursive: Bool { true }

    /// A scope for each test case only: a suite or a parameterized test as a whole takes no slot
    /// (its cases would wait for slots it holds).
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await TestSlots.shared.acquire()
        defer { TestSlots.shared.release() }
        let executor = DedicatedThreadExecutor(name: test.name)
        defer { executor.finish() }
        let timeLimit = timeLimit
        let name = test.name
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The watchdog runs on the pool: the test's thread may be the one that is stuck.
            group.addTask(executorPreference: globalConcurrentExecutor) {
                try await Task.sleep(for: timeLimit)
                Issue.record("\(name) ran longer than its time limit of \(timeLimit) on its own thread (time spent waiting to start not counted): it is probably deadlocked")
                try await Task.sleep(for: Self.grace)
                FileHandle.standardError.write(Data("error: \(name) has not returned \(Self.grace) after its time limit; ending the test process so the run cannot hang\n".utf8))
                exit(EXIT_FAILURE)
            }
            defer { group.cancelAll() }
            try await withTaskExecutorPreference(executor) { try await function() }
        }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// Each test case on its own thread, failing when it runs longer than five minutes.
    package static var dedicatedThread: Self { dedicatedThread(minutes: 5) }

    /// Each test case on its own thread, failing when it runs longer than `minutes`.
    package static func dedicatedThread(minutes: Int) -> Self { Self(timeLimit: .seconds(60 * minutes)) }
}
