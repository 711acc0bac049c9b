import Foundation

/// The result of ``ManagedObjectContext/fetchBatched(_:)``: a random-access collection that
/// knows the keys of every matching row and loads the objects a batch at a time
/// (``FetchRequest/fetchBatchSize``), keeping only the batch in use. Iterating 1,000,000 rows with
/// a batch size of 500 holds 500 objects, not a million.
///
/// Use it on its context's queue, like the objects it returns.
public final class FetchedResults<Element: ManagedObject>: RandomAccessCollection {
    private let context: ManagedObjectContext
    private let entity: EntityDescription
    private let storeNumber: UInt32
    private let keys: [Int64]
    private let batchSize: Int
    private var batchIndex = -1
    /// The loaded batch's objects, all `Element`s (kept as `ManagedObject`s: this generic class's
    /// code is not specialized for the caller's type, and the library's own is).
    private var batch: [ManagedObject] = []
    /// Results that did not come from the store in batches (pending changes applied).
    private let loaded: [Element]?
    /// The error of the last batch that could not be read (its objects are then faults, which
    /// load their row when used). A subscript cannot throw; check this after iterating when the
    /// store may fail underneath (a removed store, a locked file). Nil when every batch loaded.
    public private(set) var loadError: CoreDataError?

    init(context: ManagedObjectContext, entity: EntityDescription, storeNumber: UInt32, keys: [Int64], batchSize: Int) {
        self.context = context
        self.entity = entity
        self.storeNumber = storeNumber
        self.keys = keys
        self.batchSize = Swift.max(1, batchSize)
        self.loaded = nil
    }

    init(context: ManagedObjectContext, loaded: [Element]) {
        self.context = context
        self.entity = EntityDescription(name: "")
        self.storeNumber = 0
        self.keys = []
        self.batchSize = 1
        self.loaded = loaded
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { loaded?.count ?? keys.count }

    /// The object at `position`, loading its batch (one query) when it is not the current one.
    /// A row deleted since the fetch gives a fault that traps when used, as in Core Data.
    public subscript(position: Int) -> Element {
        if let loaded { return loaded[position] }
        let wanted = position / batchSize
        if wanted != batchIndex { load(batch: wanted) }
        return unsafeDowncast(batch[position - wanted * batchSize], to: Element.self)
    }

    private func load(batch number: Int) {
        let range = (number * batchSize)..<Swift.min(keys.count, (number + 1) * batchSize)
        var rows = RowsByKey([])
        do {
            rows = RowsByKey(try context.loadRows(entity: entity, keys: Array(keys[range]), storeNumber: storeNumber))
        } catch {
            loadError = error as? CoreDataError ?? CoreDataError(.persistentStoreOperation, "Loading a batch of \(entity.name) failed: \(error)")
        }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(range.count)
        for key in keys[range] {
            // Each row's own entity: a request for a super-entity selects sub-entity rows too.
            let object = if let row = rows.row(for: key) {
                context.registeredObject(for: .permanent(row.entity, storeNumber: storeNumber, primaryKey: key), snapshot: row.snapshot,
                                         refresh: false)
            } else {
                context.object(with: .permanent(entity, storeNumber: storeNumber, primaryKey: key))
            }
            objects.append(object)
        }
        var previous = batch
        batch = objects
        batchIndex = number
        // The batch left behind, not the whole registry: a context holding many objects would
        // walk them all at every batch.
        context.graph.forgetUnreferenced(&previous)
    }
}

/// A batch's rows found by primary key without hashing: sorted by key once (a store reading
/// keys with `IN (…)` returns them in that order already), then met by a cursor when the batch's
/// keys go up too (a request without a sort) and by binary search otherwise. A dictionary by key
/// cost ~700 instructions a row.
private struct RowsByKey {
    private let rows: [StoreRow]
    private var cursor = 0

    init(_ rows: [StoreRow]) {
        let ascending = zip(rows, rows.dropFirst()).allSatisfy { $0.primaryKey < $1.primaryKey }
        self.rows = ascending ? rows : rows.sorted { $0.primaryKey < $1.primaryKey }
    }

    /// The row with primary key `key`, if the store returned one.
    mutating func row(for key: Int64) -> StoreRow? {
        if cursor < rows.count && rows[cursor].primaryKey == key {
            cursor += 1
            return rows[cursor - 1]
        }
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if rows[middle].primaryKey < key { low = middle + 1 } else { high = middle }
        }
        guard low < rows.count && rows[low].primaryKey == key else { return nil }
        cursor = low + 1
        return rows[low]
    }
}

extension ManagedObjectContext {
    /// Fetches lazily: reads the keys of the matching rows now and the objects a batch
    /// (``FetchRequest/fetchBatchSize``, 500 when unset) at a time as they are used, so that memory
    /// stays bounded by the batch. With pending changes of the entity, or when its objects live
    /// in several stores, the objects are loaded at once (they have to be merged).
    public func fetchBatched<T: ManagedObject>(_ request: FetchRequest<T>) throws -> FetchedResults<T> {
        checkQueue("fetchBatched(_:)")
        let plan = try plan(for: request)
        if plan.usesPendingChanges || parent != nil || plan.spansStores {
            return FetchedResults(context: self, loaded: try fetch(request))
        }
        let (store, keys) = try reading { try plan.coordinator.fetchKeys(plan.storeRequest) }
        return FetchedResults(context: self, entity: plan.entity, storeNumber: store.number, keys: keys,
                              batchSize: request.fetchBatchSize > 0 ? request.fetchBatchSize : 500)
    }

    /// The committed rows of some objects of one entity (and its sub-entities) in one store, in
    /// one query, and perhaps rows of other keys beside them (the caller picks its rows by key):
    /// keys that fill at least half of the range they span (a batch of a fetch in key order, the
    /// common case) are read as that range, one range scan of the table, instead of a list of
    /// keys (a statement of 500 placeholders, and the database's temporary index of them).
    func loadRows(entity: EntityDescription, keys: [Int64], storeNumber: UInt32) throws -> [StoreRow] {
        let coordinator = try requireCoordinator()
        let store = try coordinator.store(for: .permanent(entity, storeNumber: storeNumber, primaryKey: keys.first ?? 1))
        var predicate = BoundPredicate.primaryKeyIn(keys)
        if keys.count >= 16, let low = keys.min(), let high = keys.max() {
            let (span, overflow) = high.subtractingReportingOverflow(low)
            if !overflow, span < Int64(keys.count) * 2 { predicate = .primaryKeyRange(low...high) }
        }
        return try reading { try coordinator.fetch(StoreFetchRequest(entity: entity, predicate: predicate), from: store) }
    }
}
