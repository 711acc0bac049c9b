/// The coordinator's cache of committed rows (values + version), shared by all its contexts so
/// that firing a fault or re-reading an unchanged row does not go to the store.
///
/// Filled by saves and by single-row loads; entries are replaced when a save changes a row and
/// removed when it deletes one. Bounded: past `capacity` entries the oldest half is dropped
/// (entries are only a shortcut; the store stays the truth).
package final class RowCache: Sendable {
    private struct State {
        var rows: [ManagedObjectID: RowSnapshot] = [:]
        var order: [ManagedObjectID] = []
    }
    private let state = Locked(State())
    package let capacity: Int

    package init(capacity: Int = 100_000) { self.capacity = capacity }

    package func snapshot(for id: ManagedObjectID) -> RowSnapshot? {
        state.withLock { $0.rows[id] }
    }

    package func store(_ rows: [(ManagedObjectID, RowSnapshot)]) {
        guard !rows.isEmpty else { return }
        state.withLock { state in
            for (id, row) in rows {
                if state.rows.updateValue(row, forKey: id) == nil { state.order.append(id) }
            }
            if state.rows.count > capacity {
                let drop = state.order.count / 2
                for id in state.order[..<drop] { state.rows[id] = nil }
                state.order.removeFirst(drop)
            }
        }
    }

    package func remove(_ ids: [ManagedObjectID]) {
        guard !ids.isEmpty else { return }
        state.withLock { state in for id in ids { state.rows[id] = nil } }
    }

    package var count: Int { state.withLock { $0.rows.count } }
}
