import Foundation
import OpenCoreData

/// kill -9 during a save split across two stores, and during the coordinator's file operations:
/// `replacePersistentStore`, `destroyPersistentStore`, `migratePersistentStore` and deleting
/// history. A worker repeats the operation on fresh files, acknowledging each one in an fsynced
/// ledger, until it is killed at a random moment; then every file must pass `integrity_check`,
/// hold what the acknowledged operations left and, for the one in flight, exactly its old or its
/// new content (never a part), and open again with the library, which then does the operation
/// once more.
///
/// What a split save promises across a crash is less than atomicity (DEVIATIONS.md): each store
/// is whole by itself, and one may hold its part of the save in flight while the other does not.
/// The checker holds it to exactly that and counts the rounds in which it happened.
enum KillDuringStoreOperations {
    static let operations = ["split save", "replace store", "destroy store", "migrate store", "delete history"]

    /// The store files of a round, all in `directory`.
    struct Files {
        let directory: String
        var ledger: String { directory + "/ledger" }
        var split: SplitStores { SplitStores(directory + "/split") }
        /// 40 entries in three history transactions; 60 entries in four.
        var forty: String { directory + "/forty.sqlite" }
        var sixty: String { directory + "/sixty.sqlite" }
        var destination: String { directory + "/destination.sqlite" }
        var victim: String { directory + "/victim.sqlite" }
        func numbered(_ number: Int64) -> String { directory + "/store-\(number).sqlite" }
    }

    /// The entries and history transactions of the store file at `path`, once it passes
    /// `integrity_check` and keeps its key counters ((0, 0) for a file without tables).
    static func content(_ path: String) throws -> (entries: Int64, transactions: Int64) {
        let raw = try RawStore(path)
        let name = (path as NSString).lastPathComponent
        guard let content = try raw.intactContent(named: name, history: true) else { return (0, 0) }
        let problems = try raw.keyCountersProblems()
        guard problems.isEmpty else { throw Failure("key counters of \(name): \(problems.joined(separator: ", "))") }
        return content
    }

    /// Copies `source` to `path` in one step (a copy beside it, renamed), so that a kill during the
    /// worker's own preparation never leaves half a file for the checker.
    static func place(_ source: String, at path: String) throws {
        let copy = path + ".copying"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        guard rename(copy, path) == 0 else { throw Failure("cannot rename \(copy) to \(path)") }
    }

    /// The library's count of entries in the store file at `path` (opening it, migrating nothing).
    static func libraryCount(_ path: String) throws -> Int {
        let container = try Workload.open(path)
        defer { Workload.close(container) }
        return try container.viewContext.performAndWait { try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }
    }

    // MARK: The worker

    /// In the child: `operation` again and again on the round's files until killed.
    static func work(operation: String, directory: String) throws {
        let files = Files(directory: directory)
        let acknowledged = try Ledger(files.ledger)
        let model = Workload.model()
        var number: Int64 = 0
        switch operation {
        case "split save":
            // One entry (serial = number) in the ledger file and the counter stepped to number + 1
            // in the tally file, in one save.
            let container = try files.split.open()
            let context = container.newBackgroundContext()
            let entry = container.managedObjectModel.entitiesByName["Entry"]!
            try context.performAndWait { () throws in
                let counter = try context.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))[0]
                while true {
                    ManagedObject(entity: entry, insertInto: context).setValue(number, forKey: "serial")
                    counter.setValue(number + 1, forKey: "value")
                    try context.save()
                    acknowledged.append(String(number))
                    number += 1
                }
            }
        case "replace store":
            // The destination becomes the sixty-entry store, then the forty-entry one, in turn.
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            while true {
                let source = number % 2 == 0 ? files.sixty : files.forty
                try coordinator.replacePersistentStore(at: URL(fileURLWithPath: files.destination), withPersistentStoreFrom: URL(fileURLWithPath: source), type: .sqlite)
                acknowledged.append(String(number))
                number += 1
            }
        case "destroy store":
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            while true {
                try place(files.forty, at: files.victim)
                try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: files.victim), type: .sqlite)
                acknowledged.append(String(number))
                removeStore(files.victim)
                number += 1
            }
        case "migrate store":
            // From the forty-entry store to store-0, from there to store-1, …
            let container = try Workload.open(files.forty)
            let coordinator = container.persistentStoreCoordinator
            while true {
                try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: URL(fileURLWithPath: files.numbered(number)),
                                                       options: [NSPersistentHistoryTrackingKey: true], type: .sqlite)
                acknowledged.append(String(number))
                number += 1
            }
        default: // delete history
            // A copy of the forty-entry store each time, its history before the second transaction deleted.
            while true {
                try place(files.forty, at: files.numbered(number))
                let container = try Workload.open(files.numbered(number))
                let context = container.newBackgroundContext()
                try context.performAndWait { () throws in
                    let all = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
                    _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[1].token))
                }
                Workload.close(container)
                acknowledged.append(String(number))
                number += 1
            }
        }
    }

    // MARK: The checker

    /// Checks the round's files after the kill; returns a detail worth counting (or nil).
    static func check(operation: String, files: Files) throws -> String? {
        let last = KillDuringSaves.lastAcknowledged(files.ledger)
        let model = Workload.model()
        switch operation {
        case "split save":
            let split = files.split
            try split.checkIntact()
            let serials = try RawStore(split.ledger).rows("SELECT ZSERIAL FROM ZENTRY ORDER BY ZSERIAL").compactMap { $0.first as? Int64 }
            guard serials == Array(0..<Int64(serials.count)) else { throw Failure("torn: the ledger file holds the entries \(serials.prefix(8))…, not 0 to \(serials.count - 1)") }
            let entries = Int64(serials.count)
            let counter = try RawStore(split.tally).integer("SELECT ZVALUE FROM ZCOUNTER")
            for (name, value) in [("entries", entries), ("counter", counter)] {
                guard value >= last + 1 else { throw Failure("missing: \(value) \(name) after \(last + 1) acknowledged saves") }
                guard value <= last + 2 else { throw Failure("torn: \(value) \(name) after \(last + 1) acknowledged saves (more than the one in flight)") }
            }
            for (file, saves) in [(split.ledger, entries), (split.tally, counter)] {
                let transactions = try RawStore(file).integer("SELECT COUNT(*) FROM ATRANSACTION")
                guard transactions == saves + 1 else { throw Failure("torn: \((file as NSString).lastPathComponent) has \(transactions) history transactions for \(saves) saves and the setup") }
            }
            // The app goes on: the stack opens both files and the next save writes both.
            let container = try split.open()
            defer { Workload.close(container) }
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                let counterObject = try context.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))[0]
                ManagedObject(entity: container.managedObjectModel.entitiesByName["Entry"]!, insertInto: context).setValue(entries, forKey: "serial")
                counterObject.setValue(counter + 1, forKey: "value")
                try context.save()
            }
            guard try RawStore(split.ledger).integer("SELECT COUNT(*) FROM ZENTRY") == entries + 1,
                  try RawStore(split.tally).integer("SELECT ZVALUE FROM ZCOUNTER") == counter + 1 else {
                throw Failure("missing: the save after the crash did not reach both files")
            }
            return entries != counter ? "rounds killed between the two stores' commits" : nil
        case "replace store":
            guard try content(files.forty) == (40, 3), try content(files.sixty) == (60, 4) else { throw Failure("torn: replacing changed a source store") }
            let found = try content(files.destination)
            guard found == (40, 3) || found == (60, 4) else {
                throw Failure("torn: the replaced store holds \(found.entries) entries and \(found.transactions) history transactions, neither the old store (40, 3) nor the new (60, 4)")
            }
            guard try libraryCount(files.destination) == Int(found.entries) else { throw Failure("the library counts other entries than the file holds") }
            try PersistentStoreCoordinator(managedObjectModel: model).replacePersistentStore(at: URL(fileURLWithPath: files.destination), withPersistentStoreFrom: URL(fileURLWithPath: files.sixty), type: .sqlite)
            guard try content(files.destination) == (60, 4) else { throw Failure("replacing again after the crash did not give the source's content") }
            return found.entries != (last % 2 == 0 ? 60 : 40) ? "rounds whose replacement in flight had committed" : nil
        case "destroy store":
            guard FileManager.default.fileExists(atPath: files.victim) else { return nil }
            let found = try content(files.victim)
            guard found.entries == 0 || found == (40, 3) else {
                throw Failure("torn: a store being destroyed holds \(found.entries) of 40 entries and \(found.transactions) of 3 history transactions")
            }
            guard try libraryCount(files.victim) == Int(found.entries) else { throw Failure("the library counts other entries than the file holds") }
            try PersistentStoreCoordinator(managedObjectModel: model).destroyPersistentStore(at: URL(fileURLWithPath: files.victim), type: .sqlite)
            guard try content(files.victim).entries == 0 else { throw Failure("destroying again after the crash left entries") }
            return found.entries == 0 ? "rounds killed with the store destroyed" : "rounds killed before the store was destroyed"
        case "migrate store":
            guard try content(files.forty) == (40, 3) else { throw Failure("torn: migrating changed the source store") }
            if last >= 0 {
                guard try content(files.numbered(last)) == (40, 3) else { throw Failure("missing: the acknowledged migration to store-\(last) does not hold the 40 entries and 3 history transactions") }
            }
            let inFlight = files.numbered(last + 1)
            guard FileManager.default.fileExists(atPath: inFlight) else { return nil }
            let found = try content(inFlight)
            guard found.entries == 0 || found == (40, 3) else {
                throw Failure("torn: the store being migrated to holds \(found.entries) of 40 entries and \(found.transactions) of 3 history transactions")
            }
            guard try libraryCount(inFlight) == Int(found.entries) else { throw Failure("the library counts other entries than the file holds") }
            if found.entries == 0 {
                // The app migrates again to the same file: an empty destination is accepted.
                let container = try Workload.open(last >= 0 ? files.numbered(last) : files.forty)
                defer { Workload.close(container) }
                try container.persistentStoreCoordinator.migratePersistentStore(container.persistentStoreCoordinator.persistentStores[0], to: URL(fileURLWithPath: inFlight),
                                                                               options: [NSPersistentHistoryTrackingKey: true], type: .sqlite)
                guard try container.viewContext.performAndWait({ try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }) == 40 else {
                    throw Failure("migrating again after the crash did not give the 40 entries")
                }
            }
            return found.entries == 40 ? "rounds whose migration in flight had copied everything" : "rounds killed with the destination empty"
        default: // delete history
            if last >= 0 {
                guard try content(files.numbered(last)) == (40, 1) else { throw Failure("missing or torn: the acknowledged history deletion in store-\(last) did not leave 40 entries and 1 transaction") }
            }
            let inFlight = files.numbered(last + 1)
            guard FileManager.default.fileExists(atPath: inFlight) else { return nil }
            let found = try content(inFlight)
            guard found == (40, 3) || found == (40, 1) else {
                throw Failure("torn: a store whose history was being deleted holds \(found.entries) of 40 entries and \(found.transactions) history transactions (3 before, 1 after)")
            }
            let container = try Workload.open(inFlight)
            defer { Workload.close(container) }
            let left = try container.viewContext.performAndWait { () throws in
                let all = try container.viewContext.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
                guard all.count == Int(found.transactions) else { throw Failure("the library reads \(all.count) history transactions, the file holds \(found.transactions)") }
                if all.count == 3 { _ = try container.viewContext.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[1].token)) }
                return try container.viewContext.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.count
            }
            guard left == 1 else { throw Failure("deleting the history again after the crash left \(left) transactions") }
            return found.transactions == 1 ? "rounds whose deletion in flight had committed" : nil
        }
    }

    static func run(rounds: Int, directory: URL, seed: UInt64) -> [ScenarioResult] {
        var random = SeededGenerator(seed: seed ^ 0x0FF1CE)
        let templates = Files(directory: directory.appendingPathComponent("store-operations-templates").path)
        return operations.map { operation in
            var result = ScenarioResult(scenario: "kill -9 during \(operation == "split save" ? "a save split across two stores" : operation)", rounds: 0)
            let started = Date()
            var counted: [String: Int] = [:]
            for round in 0..<rounds {
                let files = Files(directory: directory.appendingPathComponent("store-operations-\(round)").path)
                do {
                    try FileManager.default.createDirectory(atPath: templates.directory, withIntermediateDirectories: true)
                    try Workload.makeStore(at: templates.forty, batches: [20, 20])
                    try Workload.makeStore(at: templates.sixty, batches: [20, 20, 20])
                    try templates.split.make()
                    try FileManager.default.createDirectory(atPath: files.directory, withIntermediateDirectories: true)
                    for (template, copy) in [(templates.forty, files.forty), (templates.sixty, files.sixty), (templates.forty, files.destination)] {
                        try FileManager.default.copyItem(atPath: template, toPath: copy)
                    }
                    try templates.split.copy(to: files.split)
                    let worker = try Child.start(["work-store-operation", operation, files.directory])
                    usleep(UInt32.random(in: 50_000...900_000, using: &random))
                    Child.kill(worker)
                    if worker.terminationReason == .exit {
                        throw Failure("the worker stopped by itself (exit \(worker.terminationStatus)) after operation \(KillDuringSaves.lastAcknowledged(files.ledger))")
                    }
                    result.operations += Int(KillDuringSaves.lastAcknowledged(files.ledger) + 1)
                    if let detail = try check(operation: operation, files: files) { counted[detail, default: 0] += 1 }
                } catch {
                    result.record(error, round: round)
                    result.noteTornOrLost(error)
                }
                result.rounds += 1
                try? FileManager.default.removeItem(atPath: files.directory)
            }
            result.seconds = Date().timeIntervalSince(started)
            result.details["operations acknowledged"] = String(result.operations)
            for (detail, count) in counted { result.details[detail] = String(count) }
            return result
        }
    }
}
