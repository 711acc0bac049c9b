import Foundation

/// Which context queue each waiting thread waits for, to break the one deadlock `sync` could
/// otherwise build: a thread holding queue A waits for queue B while B's holder waits
/// (directly or through other queues) for A — e.g. a main-queue child reading through its
/// private-queue parent while a block on the parent calls the child's `performAndWait`.
///
/// Edges go from a queue marker (held by a waiting thread) to the marker it waits for. A queue
/// lent to a nested call (see `ContextQueue.sync`) can wait in two places at once, so a marker
/// keeps a list of what it waits for. All reads and writes happen under `edges`' lock,
/// so the check and the registration are one step and two threads can never both decide to
/// wait on each other.
enum QueueWaits {
    // `Locked` (a pthread mutex underneath) rather than `Mutex`: on Linux `Mutex` is a futex the
    // thread sanitizer cannot see, so it reported the accesses under it as races.
    private static let edges = Locked<[UInt: [UInt]]>([:])

    /// Registers that the queues in `held` wait for `target`, unless that would close a cycle
    /// (the thread holding `target` waits, perhaps through others, for one of `held`). Returns
    /// `false` in that case: `target`'s holder is blocked until we finish, so the caller may run
    /// its block on `target`'s behalf, as it would a nested `performAndWait`.
    static func beginWaiting(_ held: [UInt], for target: UInt) -> Bool {
        edges.withLock { edges in
            var seen: Set<UInt> = []
            var pending = [target]
            while let current = pending.popLast() {
                if held.contains(current) { return false }
                if seen.insert(current).inserted { pending += edges[current] ?? [] }
            }
            for marker in held { edges[marker, default: []].append(target) }
            return true
        }
    }

    /// Called by a thread that ran a block on a lent queue once the block is done. The holder,
    /// blocked until then, takes this lock when its wait ends (`endWaiting`), so everything the lent
    /// block wrote happens before what the holder does next, by this lock alone (the sanitizer
    /// then needs no model of the dispatch queue in between).
    static func publishLentWork() {
        edges.withLock { _ in }
    }

    /// Removes the edges `beginWaiting` registered: called by the waiting thread as soon as it
    /// holds `target`, before it runs anything there.
    static func endWaiting(_ held: [UInt], for target: UInt) {
        edges.withLock { edges in
            for marker in held {
                guard var targets = edges[marker], let index = targets.lastIndex(of: target) else { continue }
                targets.remove(at: index)
                edges[marker] = targets.isEmpty ? nil : targets
            }
        }
    }
}
