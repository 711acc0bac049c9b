import Foundation

/// The coordinator's cache of committed rows (values + version), shared by all its contexts so
/// that firing a fault or re-reading an unchanged row does not go to the store.
///
/// Filled by saves and by single-row loads; entries are replaced when a save changes a row and
/// removed when it deletes one. Bounded: past `capacity` entries the older half (by when each
/// was stored) is dropped (entries are only a shortcut; the store stays the truth).
///
/// An ``IDTable`` keyed by the rows' IDs: each entry carries the order in which it was stored, so
/// eviction needs no separate list of IDs (which had to be compacted as rows came and went).
///
/// Rows a save wrote are kept as the save's own list of updates and entered into the table only
/// when the cache is next used (``storeSaved(_:store:)``): a service whose contexts never read
/// through the cache (a fetch does not) pays one append per save instead of a probe and a bucket
/// per row — a tenth of the instructions of updating a fetched object, and a table of 64-byte
/// buckets written at random (17 MB for 100,000 rows). Every reading, removing or storing
/// operation enters the waiting lists first, in save order, so what the cache answers is what it
/// answered when saves entered their rows at once.
package final class RowCache: Sendable {
    struct Entry: IDTableEntry, Sendable {
        var tag: UInt64
        var id: ManagedObjectID?
        var row: RowSnapshot
        var cachedAt: TimeInterval
        /// When the entry was stored, counting stores: the oldest go first.
        var sequence: UInt64

        static var empty: Entry { Entry(tag: 0, id: nil, row: RowSnapshot(values: [], version: 0), cachedAt: 0, sequence: 0) }

        func holds(_ id: ManagedObjectID) -> Bool { self.id == id }
    }
    private struct State {
        var rows = IDTable<Entry>()
        var nextSequence: UInt64 = 0
        /// Updates of saves not entered into `rows` yet, oldest save first, with the store each
        /// wrote and when.
        var saved: [(updates: [StoreSaveRequest.Update], store: UInt32, at: TimeInterval)] = []
        /// The number of rows in `saved`.
        var savedCount = 0
    }
    /// Guarded by the lock: contexts on any queue read and fill the cache.
    private let state = Locked(State())
    package let capacity: Int

    package init(capacity: Int = 100_000) { self.capacity = capacity }

    /// The cached row, when there is one no older than `maximumAge` seconds (any age when nil).
    package func snapshot(for id: ManagedObjectID, maximumAge: TimeInterval? = nil) -> RowSnapshot? {
        state.withLock { state in
            enterSaved(&state)
            guard let index = state.rows.index(for: id) else { return nil }
            let entry = state.rows[index]
            if let maximumAge, ProcessInfo.processInfo.systemUptime - entry.cachedAt > maximumAge { return nil }
            return entry.row
        }
    }

    /// Caches rows read from a store (or written by a save), now.
    package func store(_ rows: [(ManagedObjectID, RowSnapshot)]) {
        guard !rows.isEmpty else { return }
        let now = ProcessInfo.processInfo.systemUptime
        state.withLock { state in
            enterSaved(&state)
            enter(rows, at: now, into: &state)
        }
    }

    /// Caches the rows a save's updates wrote to the store numbered `store` (each row at its
    /// next version), entered into the table when the cache is next used (or once they are more
    /// than the cache holds). Same result as ``store(_:)``, paid only when read. Rows of entities
    /// with derived attributes are left out: the store's triggers changed them after the save
    /// wrote them.
    package func storeSaved(_ updates: [StoreSaveRequest.Update], store: UInt32) {
        guard !updates.isEmpty else { return }
        let now = ProcessInfo.processInfo.systemUptime
        state.withLock { state in
            state.saved.append((updates, store, now))
            state.savedCount += updates.count
            if state.savedCount > capacity { enterSaved(&state) }
        }
    }

    /// Enters the rows of saves that wait, oldest save first.
    private func enterSaved(_ state: inout State) {
        guard !state.saved.isEmpty else { return }
        let saved = state.saved
        state.saved = []
        state.savedCount = 0
        for (updates, store, at) in saved {
            let rows = updates.lazy.filter { !$0.entity.hasDerivedAttributes }.map {
                (ManagedObjectID.permanent($0.entity, storeNumber: store, primaryKey: $0.primaryKey),
                 RowSnapshot(values: $0.values, version: $0.expectedVersion + 1))
            }
            enter(Array(rows), at: at, into: &state)
        }
    }

    private func enter(_ rows: [(ManagedObjectID, RowSnapshot)], at time: TimeInterval, into state: inout State) {
        var rows = rows[...]
        if rows.count > capacity {
            // More rows than the cache holds (a save of 200,000 objects): entered one by one, they
            // would all be stored and then the older half of everything dropped — every entry
            // held now among them. The same outcome without the work: the table starts again
            // with the newest `capacity` rows (the last ones; a list holds a row once).
            state.rows.removeAll()
            rows = rows.suffix(capacity)
        }
        state.rows.reserveCapacity(min(state.rows.count + rows.count, capacity + rows.count))
        for (id, row) in rows {
            // Never replace a row with an older version of itself.
            state.rows.insert(Entry(tag: state.rows.tag(id), id: id, row: row, cachedAt: time, sequence: state.nextSequence), for: id,
                              keepingExisting: { $0.row.version > row.version })
            state.nextSequence += 1
        }
        if state.rows.count > capacity { Self.evictOlderHalf(&state) }
    }

    /// Drops the entries stored before the median one.
    private static func evictOlderHalf(_ state: inout State) {
        let sequences = state.rows.all.map(\.sequence).sorted()
        let cut = sequences[sequences.count / 2]
        _ = state.rows.removeAll { $0.sequence < cut }
    }

    /// The number of buckets the cache's table has (what it costs, however many rows it holds).
    package var tableCapacity: Int {
        state.withLock { state in
            enterSaved(&state)
            return state.rows.capacity
        }
    }

    package func remove(_ ids: [ManagedObjectID]) {
        guard !ids.isEmpty else { return }
        state.withLock { state in
            enterSaved(&state)
            for id in ids { if let index = state.rows.index(for: id) { state.rows.remove(at: index) } }
        }
    }

    /// Drops every row whose ID matches.
    package func removeAll(where matches: (ManagedObjectID) -> Bool) {
        state.withLock { state in
            enterSaved(&state)
            _ = state.rows.removeAll { entry in entry.id.map(matches) ?? false }
        }
    }

    package var count: Int {
        state.withLock { state in
            enterSaved(&state)
            return state.rows.count
        }
    }
}
