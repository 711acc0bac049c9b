import Foundation

/// The coordinator's cache of committed rows (values + version), shared by all its contexts so
/// that firing a fault or re-reading an unchanged row does not go to the store.
///
/// Filled by saves and by single-row loads; entries are replaced when a save changes a row and
/// removed when it deletes one. Bounded: past `capacity` entries the oldest half is dropped
/// (entries are only a shortcut; the store stays the truth).
package final class RowCache: Sendable {
    private struct Entry {
        var row: RowSnapshot
        var cachedAt: TimeInterval
    }
    private struct State {
        var rows: [ManagedObjectID: Entry] = [:]
        var order: [ManagedObjectID] = []
    }
    private let state = Locked(State())
    package let capacity: Int

    package init(capacity: Int = 100_000) { self.capacity = capacity }

    /// The cached row, when there is one no older than `maximumAge` seconds (any age when nil).
    package func snapshot(for id: ManagedObjectID, maximumAge: TimeInterval? = nil) -> RowSnapshot? {
        state.withLock { state in
            guard let entry = state.rows[id] else { return nil }
            if let maximumAge, ProcessInfo.processInfo.systemUptime - entry.cachedAt > maximumAge { return nil }
            return entry.row
        }
    }

    package func store(_ rows: [(ManagedObjectID, RowSnapshot)]) {
        guard !rows.isEmpty else { return }
        let now = ProcessInfo.processInfo.systemUptime
        state.withLock { state in
            for (id, row) in rows {
                // Never replace a row with an older version of itself.
                if let existing = state.rows[id], existing.row.version > row.version { continue }
                if state.rows.updateValue(Entry(row: row, cachedAt: now), forKey: id) == nil { state.order.append(id) }
            }
            // `order` also keeps IDs removed since (and again when re-added): compacted once it
            // is twice as long as it needs to be, so that it never grows past the cache itself.
            if state.order.count > 2 * max(state.rows.count, 1024) { Self.compact(&state) }
            if state.rows.count > capacity {
                Self.compact(&state)
                let drop = state.order.count / 2
                for id in state.order[..<drop] { state.rows[id] = nil }
                state.order.removeFirst(drop)
            }
        }
    }

    /// Keeps in `order` only the IDs still cached, each once (at its latest insertion).
    private static func compact(_ state: inout State) {
        var seen = Set<ManagedObjectID>(minimumCapacity: state.rows.count)
        var kept: [ManagedObjectID] = []
        kept.reserveCapacity(state.rows.count)
        for id in state.order.reversed() where state.rows[id] != nil && seen.insert(id).inserted { kept.append(id) }
        state.order = kept.reversed()
    }

    /// How many IDs the eviction order holds (at most about twice the cached rows).
    package var orderCount: Int { state.withLock { $0.order.count } }

    package func remove(_ ids: [ManagedObjectID]) {
        guard !ids.isEmpty else { return }
        state.withLock { state in for id in ids { state.rows[id] = nil } }
    }

    /// Drops every row whose ID matches.
    package func removeAll(where matches: (ManagedObjectID) -> Bool) {
        state.withLock { state in
            state.rows = state.rows.filter { !matches($0.key) }
            Self.compact(&state)
        }
    }

    package var count: Int { state.withLock { $0.rows.count } }
}
