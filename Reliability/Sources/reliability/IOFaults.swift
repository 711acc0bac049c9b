import CFaultVFS
import Foundation
import OpenCoreData

/// I/O faults: a VFS (CFaultVFS) fails the Nth read, write or fsync, or reports a full disk,
/// for every N inside a save (history on), a batch insert, a batch delete and a migration. Each
/// call must either succeed or throw `CoreDataError` carrying the SQLite code; after a failed
/// save the context keeps its changes and the same save, retried once the fault is gone,
/// succeeds on the same stack (connections and cached statements still usable); the file stays
/// consistent and holds exactly what succeeded.
enum IOFaults {
    static let operations = ["save", "split save", "batch insert", "batch delete", "migration", "fetch",
                             "replace store", "destroy store", "migrate store", "delete history"]
    static let fileOperations: Set<String> = ["replace store", "destroy store", "migrate store", "delete history"]
    static let kinds: [(String, Int32)] = [("read", Int32(FAULT_READ)), ("write", Int32(FAULT_WRITE)), ("fsync", Int32(FAULT_SYNC)), ("disk full", Int32(FAULT_FULL))]

    /// An error from a faulted call must be a CoreDataError naming SQLite's code.
    static func checkError(_ error: any Error) throws {
        guard let error = error as? CoreDataError, error.storeDetail?.engine == "SQLite" else {
            throw Failure("a faulted call threw \(error), not a CoreDataError with the SQLite code")
        }
    }

    static func checkFile(_ path: String, entries: Int, counter: Int64?) throws {
        let raw = try RawStore(path)
        let integrity = try raw.integrity()
        guard integrity == "ok" else { throw Failure("integrity_check: \(integrity)") }
        let found = try raw.integer("SELECT COUNT(*) FROM ZENTRY")
        guard found == Int64(entries) else { throw Failure("missing or extra rows: \(found) entries, expected \(entries)") }
        if let counter {
            let value = try raw.integer("SELECT ZVALUE FROM ZCOUNTER")
            guard value == counter else { throw Failure("torn: the counter is \(value), expected \(counter)") }
        }
        let problems = try raw.keyCountersProblems()
        guard problems.isEmpty else { throw Failure("key counters: \(problems.joined(separator: ", "))") }
    }

    /// In a child: every kind of fault at every position inside `operation`. Prints
    /// `attempts A fired F` and one `failure …` line per problem.
    static func work(directory: String, operation: String) throws {
        guard fault_vfs_register() == 0 else { throw Failure("cannot register the fault VFS") }
        var attempts = 0, fired = 0, failures: [String] = []
        for (kindName, kind) in kinds {
            let path = directory + "/faults-\(operation.replacingOccurrences(of: " ", with: "-"))-\(kindName.replacingOccurrences(of: " ", with: "-")).sqlite"
            for file in [path, path + ".template"] + SplitStores(path).files { removeStore(file) }
            var n = 1
            while n <= 3_000 {
                attempts += 1
                do {
                    let didFire = try attempt(operation, kind: kind, n: n, path: path)
                    if !didFire { break }
                    fired += 1
                } catch {
                    fault_vfs_disarm()
                    failures.append("\(kindName) #\(n): \(error)")
                    if failures.count > 20 { break }
                }
                n += 1
            }
        }
        say("attempts \(attempts) fired \(fired)")
        for failure in failures { say("failure \(failure)") }
    }

    /// One faulted call at position `n`; returns whether the fault fired (false: `n` is past the
    /// operation's last I/O of that kind).
    static func attempt(_ operation: String, kind: Int32, n: Int, path: String) throws -> Bool {
        if operation == "migration" { return try attemptMigration(kind: kind, n: n, path: path) }
        if operation == "split save" { return try attemptSplitSave(kind: kind, n: n, path: path) }
        if operation == "fetch" { return try attemptFetch(kind: kind, n: n, path: path) }
        if fileOperations.contains(operation) { return try attemptStoreFileOperation(operation, kind: kind, n: n, path: path) }
        // A fresh stack on the file each time, whose state is known before the fault.
        try Workload.makeStore(at: path, batches: [])
        let before = try RawStore(path)
        let entries = Int(try before.integer("SELECT COUNT(*) FROM ZENTRY"))
        let counter = try before.integer("SELECT ZVALUE FROM ZCOUNTER")
        let container = try Workload.open(path)
        defer { Workload.close(container) }
        let context = container.newBackgroundContext()
        let entry = container.managedObjectModel.entitiesByName["Entry"]!
        var expectedEntries = entries, expectedCounter = counter
        var didFire = false
        try context.performAndWait { () throws in
            switch operation {
            case "save":
                try saveThreeEntriesAndAStep(in: context, entry: entry, counter: counter, kind: kind, n: n, what: "save")
                expectedEntries += 3
                expectedCounter += 1
            case "batch insert":
                let rows: [[String: Any]] = (0..<20).map { ["serial": Int64($0), "batch": Int64(n)] }
                fault_vfs_arm(kind, n)
                do {
                    _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
                    fault_vfs_disarm()
                } catch {
                    fault_vfs_disarm()
                    try checkError(error)
                    _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
                }
                expectedEntries += 20
            default: // batch delete
                let rows: [[String: Any]] = (0..<20).map { ["serial": Int64($0), "batch": -1] }
                _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
                let request = FetchRequest<ManagedObject>(entityName: "Entry")
                request.predicate = FetchPredicate(format: "batch == -1")
                fault_vfs_arm(kind, n)
                do {
                    _ = try context.execute(BatchDeleteRequest(fetchRequest: request))
                    fault_vfs_disarm()
                } catch {
                    fault_vfs_disarm()
                    try checkError(error)
                    _ = try context.execute(BatchDeleteRequest(fetchRequest: request))
                }
            }
            didFire = fault_vfs_fired() != 0
            // The same stack still reads what it wrote.
            let count = try context.count(for: FetchRequest<ManagedObject>(entityName: "Entry"))
            guard count == expectedEntries else { throw Failure("the stack counts \(count) entries after the retry, expected \(expectedEntries)") }
        }
        try checkFile(path, entries: expectedEntries, counter: expectedCounter)
        return didFire
    }

    /// Inserts three entries and steps the counter, saved under the fault at position `n`; after a
    /// failure (`CoreDataError` with the SQLite code) the context still has its changes and the
    /// same save, retried once the fault is gone, succeeds.
    static func saveThreeEntriesAndAStep(in context: ManagedObjectContext, entry: EntityDescription, counter: Int64,
                                         kind: Int32, n: Int, what: String) throws {
        for serial in 0..<3 { ManagedObject(entity: entry, insertInto: context).setValue(Int64(serial), forKey: "serial") }
        let counterObject = try context.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))[0]
        counterObject.setValue(counter + 1, forKey: "value")
        fault_vfs_arm(kind, n)
        do {
            try context.save()
            fault_vfs_disarm()
        } catch {
            fault_vfs_disarm()
            try checkError(error)
            guard context.hasChanges, context.insertedObjects.count == 3 else { throw Failure("after a failed \(what) the context lost its changes") }
            do { try context.save() } catch { throw Failure("the retried \(what) failed: \(error)") }
        }
    }

    /// A save split across two stores of one coordinator (entries in one file, the counter in
    /// another), faulted at position `n` of either file's I/O — the first store's final COMMIT
    /// included, which comes after the second store committed. Retried once the fault is gone,
    /// the save must succeed on the same stack, and the two files must then hold the entries and
    /// the counter's step exactly once.
    static func attemptSplitSave(kind: Int32, n: Int, path: String) throws -> Bool {
        let stores = SplitStores(path)
        try stores.make()
        let entries = try RawStore(stores.ledger).integer("SELECT COUNT(*) FROM ZENTRY")
        let counter = try RawStore(stores.tally).integer("SELECT ZVALUE FROM ZCOUNTER")
        let container = try stores.open()
        defer { Workload.close(container) }
        let context = container.newBackgroundContext()
        let entry = container.managedObjectModel.entitiesByName["Entry"]!
        var didFire = false
        try context.performAndWait { () throws in
            try saveThreeEntriesAndAStep(in: context, entry: entry, counter: counter, kind: kind, n: n, what: "split save")
            didFire = fault_vfs_fired() != 0
            let count = try context.count(for: FetchRequest<ManagedObject>(entityName: "Entry"))
            guard count == Int(entries) + 3 else { throw Failure("the stack counts \(count) entries after the split save, expected \(entries + 3)") }
        }
        try stores.checkIntact()
        let found = try RawStore(stores.ledger).integer("SELECT COUNT(*) FROM ZENTRY")
        guard found == entries + 3 else { throw Failure("missing or extra rows: \(found) entries, expected \(entries + 3)") }
        let value = try RawStore(stores.tally).integer("SELECT ZVALUE FROM ZCOUNTER")
        guard value == counter + 1 else { throw Failure("torn across stores: the counter is \(value), expected \(counter + 1)") }
        return didFire
    }

    /// Entries the faulted fetches read: enough for many page reads.
    static let fetchedEntries = 1_500

    /// Reads faulted at position `n`: a fetch of 1,500 entries as faults, each fired by reading its
    /// values, and an account's to-many. A fetch may throw (`CoreDataError` with the SQLite code);
    /// a fault that cannot be read must not pass for a deleted row or invent values. Once the
    /// disk works again, the same context, refreshed, reads every entry with its values.
    static func attemptFetch(kind: Int32, n: Int, path: String) throws -> Bool {
        try Workload.makeStore(at: path, batches: [Self.fetchedEntries])
        let container = try Workload.open(path)
        defer { Workload.close(container) }
        let context = container.newBackgroundContext()
        var didFire = false
        try context.performAndWait { () throws in
            let entries = FetchRequest<ManagedObject>(entityName: "Entry")
            entries.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: true)]
            fault_vfs_arm(kind, n)
            do {
                for entry in try context.fetch(entries) {
                    let serial = entry.value(forKey: "serial") as? Int64
                    guard entry.isDeleted || serial == nil || (0..<Int64(Self.fetchedEntries)).contains(serial!) else { throw Failure("a faulted read invented the serial \(serial!)") }
                }
                for account in try context.fetch(FetchRequest<ManagedObject>(entityName: "Account")) {
                    _ = (account.value(forKey: "entries") as? Set<ManagedObject>)?.count
                }
                fault_vfs_disarm()
            } catch let failure as Failure {
                fault_vfs_disarm()
                throw failure
            } catch {
                fault_vfs_disarm()
                try checkError(error)
            }
            didFire = fault_vfs_fired() != 0
            context.refreshAllObjects()
            let again = try context.fetch(entries)
            let serials = again.map { $0.value(forKey: "serial") as? Int64 ?? -1 }
            guard serials == (0..<Self.fetchedEntries).map(Int64.init) else { throw Failure("after the fault the context reads the serials \(serials.prefix(8))…, expected 0 to \(Self.fetchedEntries - 1)") }
            guard !again.contains(where: \.isDeleted) else { throw Failure("an entry whose read failed passes for deleted") }
            let linked = try context.fetch(FetchRequest<ManagedObject>(entityName: "Account")).reduce(0) { $0 + (($1.value(forKey: "entries") as? Set<ManagedObject>)?.count ?? 0) }
            guard linked == Self.fetchedEntries else { throw Failure("after the fault the accounts hold \(linked) entries, expected \(Self.fetchedEntries)") }
        }
        try checkFile(path, entries: Self.fetchedEntries, counter: nil)
        return didFire
    }

    /// A store with 40 entries in three saves (three history transactions), made once per kind.
    static func storeTemplate(_ path: String) throws -> String {
        let template = path + ".template"
        try Workload.makeStore(at: template, batches: [20, 20])
        return template
    }

    /// The entries of the store file at `path` once it passes `integrity_check` (0 without tables).
    static func intactEntries(_ path: String) throws -> Int64 {
        try RawStore(path).intactContent(named: (path as NSString).lastPathComponent)?.entries ?? 0
    }

    /// `replacePersistentStore`, `destroyPersistentStore`, `migratePersistentStore` and a history
    /// deletion, faulted at position `n`. Each throws `CoreDataError` with the SQLite code or
    /// succeeds; after a failure every file involved passes `integrity_check` and holds exactly
    /// its old or its new content (never a part), the source of a copy is untouched, and the
    /// operation, done again once the disk works, succeeds.
    static func attemptStoreFileOperation(_ operation: String, kind: Int32, n: Int, path: String) throws -> Bool {
        let template = try storeTemplate(path)
        let source = path + "-source.sqlite", destination = path + "-destination.sqlite"
        for file in [source, destination] { removeStore(file) }
        try FileManager.default.copyItem(atPath: template, toPath: source)
        let model = Workload.model()
        var didFire = false
        /// Runs `body` under the fault; on a failure checks the error, runs `between` and then `body` again.
        func faulted(_ body: () throws -> Void, between: () throws -> Void = {}) throws {
            fault_vfs_arm(kind, n)
            do {
                try body()
                fault_vfs_disarm()
                didFire = fault_vfs_fired() != 0
            } catch {
                fault_vfs_disarm()
                didFire = fault_vfs_fired() != 0
                try checkError(error)
                try between()
                do { try body() } catch { throw Failure("\(operation) failed again once the disk worked: \(error)") }
            }
        }
        switch operation {
        case "replace store":
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let empty = try Workload.open(destination)
            try empty.viewContext.performAndWait { () throws in try Workload.perform(.setup, number: 0, in: empty.viewContext) }
            try empty.persistentStoreCoordinator.remove(empty.persistentStoreCoordinator.persistentStores[0])
            try faulted {
                try coordinator.replacePersistentStore(at: URL(fileURLWithPath: destination), withPersistentStoreFrom: URL(fileURLWithPath: source), type: .sqlite)
            } between: {
                let entries = try intactEntries(destination)
                guard entries == 0 || entries == 40 else { throw Failure("a failed replace left \(entries) entries, neither the old store (0) nor the new (40)") }
            }
            guard try intactEntries(destination) == 40 else { throw Failure("the replaced store does not hold the source's 40 entries") }
            guard try intactEntries(source) == 40 else { throw Failure("replacing changed the source store") }
        case "destroy store":
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try faulted {
                try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: source), type: .sqlite)
            } between: {
                let entries = try intactEntries(source)
                guard entries == 0 || entries == 40 else { throw Failure("a failed destroy left \(entries) of 40 entries") }
            }
            guard try intactEntries(source) == 0 else { throw Failure("the destroyed store still holds entries") }
        case "migrate store":
            let container = try Workload.open(source)
            defer { Workload.close(container) }
            let coordinator = container.persistentStoreCoordinator
            try faulted {
                let store = coordinator.persistentStores[0]
                try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: destination), options: [NSPersistentHistoryTrackingKey: true], type: .sqlite)
            } between: {
                // The source is still the coordinator's store, whole; the app clears the
                // destination (Core Data refuses one that holds objects) and tries again.
                guard coordinator.persistentStores.count == 1, coordinator.persistentStores[0].url?.path == source else {
                    throw Failure("after a failed migratePersistentStore the coordinator's stores are \(coordinator.persistentStores.compactMap(\.url?.lastPathComponent))")
                }
                let count = try container.viewContext.performAndWait { try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }
                guard count == 40 else { throw Failure("after a failed migratePersistentStore the source store counts \(count) entries") }
                try PersistentStoreCoordinator(managedObjectModel: model).destroyPersistentStore(at: URL(fileURLWithPath: destination), type: .sqlite)
            }
            guard coordinator.persistentStores.count == 1, coordinator.persistentStores[0].url?.path == destination else { throw Failure("the migrated store is not the coordinator's") }
            let count = try container.viewContext.performAndWait { try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }
            guard count == 40 else { throw Failure("the migrated store counts \(count) of 40 entries") }
            guard try intactEntries(source) == 40 else { throw Failure("migrating changed the source store") }
        default: // delete history
            let container = try Workload.open(source)
            defer { Workload.close(container) }
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                let all = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
                guard all.count == 3 else { throw Failure("the template has \(all.count) history transactions, expected 3") }
                try faulted {
                    _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[1].token))
                } between: {
                    let left = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
                    guard left.count == 3 || left.count == 1 else { throw Failure("a failed history deletion left \(left.count) of 3 transactions") }
                }
                let left = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
                guard left.map(\.token) == [all[2].token] else { throw Failure("after deleting the history before the second transaction, \(left.count) are left") }
                guard try context.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) == 40 else { throw Failure("deleting history changed the entries") }
            }
            guard try intactEntries(source) == 40 else { throw Failure("the store is not whole after deleting history") }
        }
        return didFire
    }

    static func attemptMigration(kind: Int32, n: Int, path: String) throws -> Bool {
        let template = try storeTemplate(path)
        removeStore(path)
        try FileManager.default.copyItem(atPath: template, toPath: path)
        fault_vfs_arm(kind, n)
        var container: PersistentContainer?
        do {
            container = try Workload.open(path, version: 2)
            fault_vfs_disarm()
        } catch {
            fault_vfs_disarm()
            try checkError(error)
        }
        let didFire = fault_vfs_fired() != 0
        if let container { try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0]) }
        // Exactly the old or the new version, with all rows; and it migrates once the fault is gone.
        let raw = try RawStore(path)
        let integrity = try raw.integrity()
        guard integrity == "ok" else { throw Failure("integrity_check: \(integrity)") }
        _ = try KillDuringMigration.version(of: raw)
        let reopened = try Workload.open(path, version: 2)
        let count = try reopened.viewContext.performAndWait { try reopened.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }
        try reopened.persistentStoreCoordinator.remove(reopened.persistentStoreCoordinator.persistentStores[0])
        guard count == 40 else { throw Failure("missing: \(count) of 40 entries after the migration") }
        return didFire
    }

    static func run(directory: URL) -> [ScenarioResult] {
        operations.map { operation in
            var result = ScenarioResult(scenario: "I/O faults in a \(operation) (read, write, fsync, disk full at every N)", rounds: 0)
            let started = Date()
            do {
                let output = Pipe()
                let child = try Child.start(["work-faults", directory.path, operation], output: output.fileHandleForWriting)
                try? output.fileHandleForWriting.close()
                let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
                child.waitUntilExit()
                if child.terminationStatus != 0 { throw Failure("the faulted process died (\(child.terminationReason == .uncaughtSignal ? "signal" : "exit") \(child.terminationStatus)) after: \(lines.suffix(3))") }
                let summary = lines.first { $0.hasPrefix("attempts ") }?.split(separator: " ") ?? []
                result.rounds = summary.count > 1 ? Int(summary[1]) ?? 0 : 0
                if summary.count > 3 { result.details["faults that fired"] = String(summary[3]) }
                for failure in lines where failure.hasPrefix("failure ") {
                    result.record(Failure(String(failure.dropFirst(8))), round: 0)
                    result.noteTornOrLost(Failure(failure))
                }
            } catch {
                result.record(error, round: 0)
            }
            result.seconds = Date().timeIntervalSince(started)
            return result
        }
    }
}
