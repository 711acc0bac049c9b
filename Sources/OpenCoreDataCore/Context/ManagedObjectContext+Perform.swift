import Foundation

extension ManagedObjectContext {
    /// When an async `perform` runs its block. Mirrors `NSManagedObjectContext.ScheduledTaskType`.
    public enum ScheduledTaskType: Sendable {
        /// Run at once when already on the context's queue, otherwise enqueue.
        case immediate
        /// Always enqueue behind blocks already scheduled.
        case enqueued
    }

    /// Runs `block` asynchronously on the context's queue, in FIFO order with every other
    /// block, then calls ``processPendingChanges()``. Returns at once.
    ///
    /// Mirrors `perform(_:)`. In `async` code Swift picks the async overload instead, exactly
    /// as with Core Data.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            block()
            processPendingChanges()
            checkInvariantsIfEnabled()
        }
    }

    /// Runs `block` on the context's queue and waits for it; returns its value and rethrows its error.
    ///
    /// Reentrant: called from the context's own queue (inside `perform` or another
    /// `performAndWait`), the block runs inline. Otherwise it waits behind blocks already
    /// enqueued; for a private-queue context it then runs on the calling thread.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        guard Self.checksInvariants, !queue.isCurrent else { return try queue.sync(block) }
        return try queue.sync {
            defer { checkInvariantsIfEnabled() }
            return try block()
        }
    }

    /// Runs `block` on the context's queue and returns its result to the awaiting task.
    ///
    /// ```swift
    /// let count = try await context.perform { try context.count(for: Note.fetchRequest()) }
    /// ```
    /// The result must be `Sendable` (managed objects are not: return their IDs).
    /// The block's error type is kept (typed throws): a block that cannot throw makes a call
    /// that cannot throw, as with Core Data's `rethrows`.
    public func perform<T: Sendable, E: Error>(
        schedule: ScheduledTaskType = .immediate,
        _ block: sending @escaping () throws(E) -> T
    ) async throws(E) -> T {
        if schedule == .immediate && queue.isCurrent {
            return try block()
        }
        // The block was handed over with `sending`: nothing else references it, and it runs once
        // on the context's queue.
        let work = UncheckedSendable(block)
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                let result = Result { () throws(E) -> T in try work.value() }
                processPendingChanges()
                checkInvariantsIfEnabled()
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }
}
