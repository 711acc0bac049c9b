import Foundation

/// A serial executor that runs its jobs on a context's queue, each as one event of the context
/// (pending changes are processed after it, as after a `perform` block). An actor whose executor
/// this is runs its methods where the context's objects live, so it uses them without `perform`,
/// and the compiler keeps them inside it (managed objects are not `Sendable`).
///
/// `@ContextActor` makes such an actor; ``ContextActing`` is what it conforms to.
public final class ContextExecutor: SerialExecutor {
    /// The context whose queue runs the jobs.
    public let context: ManagedObjectContext

    /// An executor on `context`'s queue.
    public init(context: ManagedObjectContext) {
        self.context = context
    }

    /// Runs `job` on the context's queue, then ends the event.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        let context = context
        context.queue.async {
            job.runSynchronously(on: executor)
            context.processPendingChanges()
            context.checkInvariantsIfEnabled()
        }
    }

    /// Traps unless the caller runs on the context's queue (the runtime asks when isolation
    /// cannot be proven otherwise, e.g. `assumeIsolated`).
    public func checkIsolated() {
        precondition(context.queue.isCurrent, "Not on the queue of context '\(context.debugName)': this code belongs to its ContextActor.")
    }

    /// Another executor on the same context's queue is the same execution context.
    public func isSameExclusiveExecutionContext(other: ContextExecutor) -> Bool {
        other.context.queue === context.queue
    }
}

/// An actor that runs on a context's queue (what `@ContextActor` generates): its methods use
/// ``managedObjectContext`` and its objects directly. Mirrors SwiftData's `ModelActor`.
public protocol ContextActing: Actor {
    /// The context the actor's methods run on.
    nonisolated var managedObjectContext: ManagedObjectContext { get }
    /// The executor on that context's queue.
    nonisolated var contextExecutor: ContextExecutor { get }
}

extension ContextActing {
    /// The actor's executor: its context's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        contextExecutor.asUnownedSerialExecutor()
    }
}
