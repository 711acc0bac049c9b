import Dispatch
import Foundation

/// The one funnel through which a context's work reaches its queue.
///
/// Each context owns one: a private serial queue for `.privateQueue` contexts, the main queue
/// for `.mainQueue` contexts. Every `perform` variant goes through here. The cases:
/// - called from outside the queue: `async` enqueues; `sync` waits behind queued blocks and,
///   for a private queue, runs the block on the calling thread (libdispatch's `sync`);
/// - re-entered (already on the queue, e.g. `performAndWait` inside `perform`): `sync` runs
///   the block inline, so nested calls never deadlock;
/// - called from another context's queue: treated as outside, unless the queue's holder waits
///   (directly or through other queues) for a queue this thread holds: then the block runs here,
///   since waiting would deadlock (see `QueueWaits`).
///
/// Which queue we are on is told by a queue-specific marker, never `Thread.isMainThread`
/// (under `swift test` on Linux the main queue is drained on a worker thread).
package final class ContextQueue: Sendable {
    private static let key = DispatchSpecificKey<UInt>()
    private static let mainMarker: UInt = 1
    private static let markMain: Void = {
        DispatchQueue.main.setSpecific(key: key, value: mainMarker)
    }()
    private static let counter = Atomic(UInt(1))

    package let queue: DispatchQueue
    package let isMain: Bool
    private let marker: UInt

    package init(main: Bool, label: String) {
        Self.markMain
        isMain = main
        if main {
            queue = DispatchQueue.main
            marker = Self.mainMarker
        } else {
            queue = DispatchQueue(label: label)
            marker = Self.counter.add(1, ordering: .relaxed).newValue
            queue.setSpecific(key: Self.key, value: marker)
        }
    }

    /// Whether the current code runs on this queue: it is the queue executing now, or a queue
    /// this thread holds while it waits inside `sync` on another queue (so that a child context's
    /// `performAndWait` on the main thread can use its main-queue parent without deadlocking).
    package var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.key) == marker || HeldQueues.contains(marker)
    }

    /// Enqueues `block` (FIFO).
    package func async(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    /// Runs `block` on the queue and waits: inline when already on it, behind queued blocks otherwise.
    package func sync<T>(_ block: () throws -> T) rethrows -> T {
        if isCurrent { return try block() }
        // This thread keeps holding the queue it runs on while it waits; the block may run on this
        // very thread (libdispatch runs `sync` blocks of a private queue on the caller).
        let held = DispatchQueue.getSpecific(key: Self.key)
        if let held { HeldQueues.push(held) }
        defer { if held != nil { HeldQueues.pop() } }
        let holding = HeldQueues.all
        guard !holding.isEmpty else { return try queue.sync(execute: block) }
        guard QueueWaits.beginWaiting(holding, for: marker) else {
            // This queue's holder is waiting for a queue we hold: waiting here would deadlock.
            // It stays blocked until we return, so the block runs here, as a nested call would.
            HeldQueues.push(marker)
            defer {
                HeldQueues.pop()
                QueueWaits.publishLentWork()
            }
            return try block()
        }
        // The wait ends the moment this thread holds the queue, inside the sync block, not after it
        // returns: from then on the queue's holder is us, running, and nobody may lend it any more.
        // Ending it after `sync` returned left the edge standing while this thread already ran on
        // (the queue released, a thread taking it saw the stale edge and ran a block on a queue we
        // hold, beside us: the thread sanitizer's report in PerformTests).
        return try queue.sync {
            QueueWaits.endWaiting(holding, for: marker)
            return try block()
        }
    }
}

import Synchronization
