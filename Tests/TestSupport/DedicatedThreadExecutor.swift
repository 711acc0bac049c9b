import Foundation

/// A task executor that runs every job on one thread of its own, in order, never on Swift's
/// cooperative pool.
///
/// The cooperative pool has as many threads as cores (two on CI). A test that blocks one of them
/// (`performAndWait`, `concurrentPerform`, a semaphore, `Thread.sleep`, a child process) keeps every
/// other test from starting; ``DedicatedThreadTrait`` runs each test case on an executor of this
/// kind instead, so a test can block for as long as it likes and only delays itself.
///
/// `@unchecked Sendable`: `jobs`, `finishing` and `exited` are only touched with `condition`
/// locked; the thread itself is the executor's only consumer.
package final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private var exited = false

    /// Starts the thread; `name` shows in debuggers and thread dumps.
    package init(name: String) {
        // The thread keeps the executor alive until it exits, after `finish()`. It names itself:
        // on Linux a name set before `start()` does not reach the system thread.
        let thread = Thread { [self] in
            Thread.current.name = name
            run()
        }
        // As much stack as a thread of the cooperative pool: some tests parse deeply nested input.
        thread.stackSize = 8 << 20
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        guard !exited else {
            // A job after the end of the test it belonged to (none is expected): the pool runs it
            // rather than nobody.
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once the jobs already enqueued have run.
    package func finish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty && !finishing { condition.wait() }
            guard !jobs.isEmpty else {
                exited = true
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
