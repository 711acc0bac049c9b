import Foundation
import Synchronization

/// One query generation: what a pinned context reads — each store as it was when the generation
/// first read from it. Stores that can (SQLite in WAL mode, PostgreSQL) keep a read snapshot open for it
/// (``QueryGeneration/snapshot(for:open:)``), closed when the last context and token using the
/// generation let go of it; other stores read unpinned.
///
/// Shared by every context pinned to it (one context's token given to another aligns them), so
/// the snapshots sit behind a lock and each snapshot serialises its own reads.
package final class QueryGeneration: Sendable {
    /// A store that cannot pin reads (in memory, SQLite not in WAL mode): its reads are unpinned.
    private final class Unpinned: Sendable {}

    /// Store key → its open snapshot (or `Unpinned`).
    private let snapshots = Locked<[String: any Sendable & AnyObject]>([:])

    /// How many generations exist: while none does, reads skip looking for one (a task-local
    /// lookup on every row a fault loads).
    private static let alive = Atomic<Int>(0)

    package init() {
        Self.alive.add(1, ordering: .relaxed)
    }

    deinit {
        Self.alive.subtract(1, ordering: .relaxed)
    }

    /// The generation the current read runs in (``QueryGenerationScope``), if any.
    package static var current: QueryGeneration? {
        alive.load(ordering: .relaxed) == 0 ? nil : QueryGenerationScope.current
    }

    /// The snapshot of the store keyed `key`, opened by `open` on the generation's first read
    /// from it; `nil` when the store reads unpinned (`open` returned `nil`).
    package func snapshot<Snapshot: Sendable & AnyObject>(for key: String, open: () throws -> Snapshot?) throws -> Snapshot? {
        try snapshots.withLock { snapshots in
            if let known = snapshots[key] { return known as? Snapshot }
            let opened: (any Sendable & AnyObject) = try open() ?? Unpinned()
            snapshots[key] = opened
            return opened as? Snapshot
        }
    }
}

/// The query generation the current read runs in: bound by a pinned context around its reads
/// from the store (``ManagedObjectContext/reading(_:)``), read by the stores' readers.
package enum QueryGenerationScope {
    @TaskLocal package static var current: QueryGeneration?
}

/// Names a query generation: a context's (``ManagedObjectContext/queryGenerationToken``) or
/// ``current``, the newest, to pin a context with
/// ``ManagedObjectContext/setQueryGenerationFrom(_:)``. Tokens of one generation are equal.
/// Mirrors `NSQueryGenerationToken`.
public final class QueryGenerationToken: Hashable, Sendable, CustomStringConvertible {
    /// `nil` for ``current``.
    package let generation: QueryGeneration?

    package init(generation: QueryGeneration?) {
        self.generation = generation
    }

    /// The newest generation: a context pinned with it reads the stores as they are at its next
    /// read. Mirrors `NSQueryGenerationToken.current`.
    public static let current = QueryGenerationToken(generation: nil)

    public static func == (lhs: QueryGenerationToken, rhs: QueryGenerationToken) -> Bool {
        lhs.generation === rhs.generation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(generation.map(ObjectIdentifier.init))
    }

    public var description: String {
        generation.map { "<QueryGenerationToken \(ObjectIdentifier($0))>" } ?? "<QueryGenerationToken current>"
    }
}
