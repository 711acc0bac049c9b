import Foundation
import OpenCoreData

/// The seeded workload the kill rounds run: accounts, entries in numbered batches, and a counter
/// every context save bumps, changed through context saves and batch requests. Each operation
/// is one store transaction; `plan` picks it from the seed and the state so far, so that the
/// checker replays exactly what the worker did.
enum Workload {
    static func model(version: Int = 1) -> ManagedObjectModel {
        // Version 2 adds an attribute with a default and turns `amount` into a Double: the
        // migration converts every row (row by row, reporting progress), not a straight copy.
        var entry: [PropertyDescription] = [
            AttributeDescription(name: "batch", type: .integer64, isOptional: false, defaultValue: 0),
            AttributeDescription(name: "serial", type: .integer64, isOptional: false, defaultValue: 0),
            version > 1 ? AttributeDescription(name: "amount", type: .double, isOptional: false, defaultValue: 0.0)
                : AttributeDescription(name: "amount", type: .integer64, isOptional: false, defaultValue: 0),
            RelationshipDescription(name: "account", destination: "Account", inverse: "entries"),
        ]
        if version > 1 { entry.append(AttributeDescription(name: "memo", type: .string, isOptional: false, defaultValue: "migrated")) }
        return ManagedObjectModel(entities: [
            EntityDescription(name: "Account", properties: [
                AttributeDescription(name: "number", type: .integer64, isOptional: false, defaultValue: 0),
                RelationshipDescription(name: "entries", destination: "Entry", toMany: true, inverse: "account", deleteRule: .cascade),
            ]),
            EntityDescription(name: "Entry", properties: entry),
            EntityDescription(name: "Counter", properties: [
                AttributeDescription(name: "value", type: .integer64, isOptional: false, defaultValue: 0),
                AttributeDescription(name: "lastBatch", type: .integer64, isOptional: false, defaultValue: 0),
            ]),
        ])
    }

    /// A container on the store file at `path`, history on, with model `version`.
    static func open(_ path: String, version: Int = 1) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: model(version: version))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// Removes every store of `container` from its coordinator (closing the files).
    static func close(_ container: PersistentContainer) {
        let coordinator = container.persistentStoreCoordinator
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }

    /// Makes the store file at `path` (unless it exists): `.setup`, then one insert per element of
    /// `batches` (batch `i + 1` of that many entries with serials from 0, accounts in turn), so
    /// `1 + batches.count` history transactions; closed and checkpointed into the one file, ready
    /// to copy.
    static func makeStore(at path: String, batches: [Int]) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let container = try open(path)
        try container.viewContext.performAndWait { () throws in
            try perform(.setup, number: 0, in: container.viewContext)
            for (index, count) in batches.enumerated() {
                try perform(.insert(batch: Int64(index + 1), count: count, account: Int64(index % 3 + 1)), number: Int64(index + 1), in: container.viewContext)
            }
        }
        close(container)
        _ = try RawStore(path, writable: true).rows("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    enum Operation: Equatable {
        /// Operation 0: three accounts and the counter.
        case setup
        case insert(batch: Int64, count: Int, account: Int64)
        case update(batch: Int64, amount: Int64)
        case delete(batch: Int64)
        case batchInsert(batch: Int64, count: Int)
        case batchUpdate(batch: Int64, amount: Int64)
        case batchDelete(batch: Int64)
    }

    /// What the store holds after a sequence of operations.
    struct State: Equatable {
        /// Per batch: entries, their amount, and whether they belong to an account.
        var batches: [Int64: (count: Int, amount: Int64, linked: Bool)] = [:]
        var counter: Int64 = 0
        var lastBatch: Int64 = 0
        var transactions: Int64 = 0
        /// The batches in the order they were made (what `plan` picks from; not compared).
        var order: [Int64] = []

        static func == (a: State, b: State) -> Bool {
            a.counter == b.counter && a.lastBatch == b.lastBatch && a.transactions == b.transactions
                && a.batches.count == b.batches.count
                && a.batches.allSatisfy { key, value in b.batches[key].map { $0 == value } ?? false }
        }

        mutating func apply(_ operation: Operation, number: Int64) {
            transactions += 1
            switch operation {
            case .setup: break
            case .insert(let batch, let count, _):
                batches[batch] = (count, number, true)
                order.append(batch)
                counter += 1
                lastBatch = batch
            case .update(let batch, let amount):
                batches[batch]?.amount = amount
                counter += 1
                lastBatch = batch
            case .delete(let batch):
                batches[batch] = nil
                order.removeAll { $0 == batch }
                counter += 1
                lastBatch = batch
            case .batchInsert(let batch, let count):
                batches[batch] = (count, number, false)
                order.append(batch)
            case .batchUpdate(let batch, let amount): batches[batch]?.amount = amount
            case .batchDelete(let batch):
                batches[batch] = nil
                order.removeAll { $0 == batch }
            }
        }
    }

    /// Operation `number` of the workload seeded `seed`, given the state before it.
    static func plan(_ number: Int64, seed: UInt64, state: State) -> Operation {
        guard number > 0 else { return .setup }
        var random = SeededGenerator(seed: seed &* 1_000_003 &+ UInt64(number))
        let existing = state.order
        let pick = Int.random(in: 0..<10, using: &random)
        if existing.count < 3 || pick < 4 {
            return pick % 2 == 0 || existing.count < 3
                ? .insert(batch: number, count: Int.random(in: 1...12, using: &random), account: Int64.random(in: 1...3, using: &random))
                : .batchInsert(batch: number, count: Int.random(in: 5...40, using: &random))
        }
        let batch = existing[Int.random(in: 0..<existing.count, using: &random)]
        switch pick {
        case 4, 5: return .update(batch: batch, amount: number)
        case 6: return .delete(batch: batch)
        case 7, 8: return .batchUpdate(batch: batch, amount: number)
        default: return .batchDelete(batch: batch)
        }
    }

    /// The state after operations 0…`last`.
    static func replay(through last: Int64, seed: UInt64) -> State {
        var state = State()
        guard last >= 0 else { return state }
        for number in 0...last { state.apply(plan(number, seed: seed, state: state), number: number) }
        return state
    }

    /// Runs `operation` against the store, through the public API, as one transaction.
    static func perform(_ operation: Operation, number: Int64, in context: ManagedObjectContext) throws {
        let model = context.persistentStoreCoordinator!.managedObjectModel
        let entry = model.entitiesByName["Entry"]!
        func counter() throws -> ManagedObject {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))[0]
        }
        func bump(_ batch: Int64) throws {
            let counter = try counter()
            counter.setValue((counter.value(forKey: "value") as? Int64 ?? 0) + 1, forKey: "value")
            counter.setValue(batch, forKey: "lastBatch")
        }
        func entries(_ batch: Int64) throws -> [ManagedObject] {
            let request = FetchRequest<ManagedObject>(entityName: "Entry")
            request.predicate = FetchPredicate(format: "batch == %lld", batch)
            return try context.fetch(request)
        }
        switch operation {
        case .setup:
            for number in 1...3 {
                ManagedObject(entity: model.entitiesByName["Account"]!, insertInto: context).setValue(Int64(number), forKey: "number")
            }
            _ = ManagedObject(entity: model.entitiesByName["Counter"]!, insertInto: context)
            try context.save()
        case .insert(let batch, let count, let accountNumber):
            let request = FetchRequest<ManagedObject>(entityName: "Account")
            request.predicate = FetchPredicate(format: "number == %lld", accountNumber)
            let account = try context.fetch(request)[0]
            for serial in 0..<count {
                let object = ManagedObject(entity: entry, insertInto: context)
                object.setValue(batch, forKey: "batch")
                object.setValue(Int64(serial), forKey: "serial")
                object.setValue(number, forKey: "amount")
                object.setValue(account, forKey: "account")
            }
            try bump(batch)
            try context.save()
        case .update(let batch, let amount):
            for object in try entries(batch) { object.setValue(amount, forKey: "amount") }
            try bump(batch)
            try context.save()
        case .delete(let batch):
            for object in try entries(batch) { context.delete(object) }
            try bump(batch)
            try context.save()
        case .batchInsert(let batch, let count):
            let rows: [[String: Any]] = (0..<count).map { ["batch": batch, "serial": Int64($0), "amount": number] }
            _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
        case .batchUpdate(let batch, let amount):
            _ = try context.execute(BatchUpdateRequest(entityName: "Entry", predicate: FetchPredicate(format: "batch == %lld", batch), propertiesToUpdate: ["amount": amount]))
        case .batchDelete(let batch):
            let request = FetchRequest<ManagedObject>(entityName: "Entry")
            request.predicate = FetchPredicate(format: "batch == %lld", batch)
            _ = try context.execute(BatchDeleteRequest(fetchRequest: request))
        }
        // Batch requests bypass the context: forget what it holds so the next fetch reads the store.
        context.reset()
    }

    /// What the file holds, read with plain SQL.
    static func read(_ store: RawStore) throws -> State {
        var state = State()
        for row in try store.rows("SELECT ZBATCH, COUNT(*), MIN(ZAMOUNT), MAX(ZAMOUNT), COUNT(ZACCOUNT) FROM ZENTRY GROUP BY ZBATCH") {
            let (batch, count, low, high, linked) = (row[0] as! Int64, row[1] as! Int64, row[2] as! Int64, row[3] as! Int64, row[4] as! Int64)
            guard low == high, linked == 0 || linked == count else {
                throw Failure("batch \(batch) is torn: amounts \(low)…\(high), \(linked) of \(count) entries linked to an account")
            }
            state.batches[batch] = (Int(count), low, linked > 0)
        }
        if let counter = try store.rows("SELECT ZVALUE, ZLASTBATCH FROM ZCOUNTER").first {
            state.counter = counter[0] as? Int64 ?? -1
            state.lastBatch = counter[1] as? Int64 ?? -1
        }
        state.transactions = try store.integer("SELECT COUNT(*) FROM ATRANSACTION")
        let dangling = try store.integer("SELECT COUNT(*) FROM ZENTRY WHERE ZACCOUNT IS NOT NULL AND ZACCOUNT NOT IN (SELECT Z_PK FROM ZACCOUNT)")
        if dangling > 0 { throw Failure("\(dangling) entries point at accounts that do not exist") }
        return state
    }

    static func describe(_ state: State) -> String {
        "counter \(state.counter), last batch \(state.lastBatch), \(state.transactions) transactions, \(state.batches.count) batches, \(state.batches.values.reduce(0) { $0 + $1.count }) entries"
    }
}
