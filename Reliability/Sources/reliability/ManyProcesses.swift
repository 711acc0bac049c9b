import Foundation
import OpenCoreData

/// Many processes on one store: eight workers for a set time, each incrementing one shared
/// counter with retry (under the error merge policy: the total must be exact), inserting
/// entries (keys and serials must never repeat), writing a shared account under its own merge
/// policy (conflicts resolved, never an error), running batch updates, and following everyone
/// else through persistent history. At the end every worker's long-lived context, kept current
/// by history merges alone, must show the same counter and entry count as the file.
enum ManyProcesses {
    static let policies: [(String, MergePolicy)] = [("error", .error), ("mergeByPropertyObjectTrump", .mergeByPropertyObjectTrump),
                                                    ("mergeByPropertyStoreTrump", .mergeByPropertyStoreTrump), ("overwrite", .overwrite)]

    static func open(_ store: String) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.timeout = 60
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// In a child: opens (maybe creating) the store and prints its UUID.
    static func create(store: String) throws {
        let container = try open(store)
        say(container.persistentStoreCoordinator.persistentStores[0].identifier)
    }

    static func work(store: String, worker: Int, seconds: Double, ledger: String) throws {
        let container = try open(store)
        let written = try Ledger(ledger)
        let model = container.managedObjectModel
        let (policyName, policy) = policies[worker % policies.count]
        let counting = container.newBackgroundContext()
        let shared = container.newBackgroundContext()
        shared.mergePolicy = policy
        // The long-lived view, kept current only by merging history.
        let view = container.newBackgroundContext()
        var token: PersistentHistoryToken?
        var held: [ManagedObject] = []
        try view.performAndWait { () throws in
            held = try view.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))
            token = try view.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.last?.token
        }
        func followHistory() throws {
            try view.performAndWait { () throws in
                let transactions = try view.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
                view.mergeChanges(fromHistory: transactions)
                token = transactions.last?.token ?? token
            }
        }
        let deadline = Date().addingTimeInterval(seconds)
        var serial: Int64 = 0
        var conflicts = 0
        while Date() < deadline {
            // The shared counter: read, add one, save; on a conflict, start again from the store.
            while true {
                let saved = try counting.performAndWait { () throws -> Bool in
                    let counter = try counting.fetch(FetchRequest<ManagedObject>(entityName: "Counter"))[0]
                    counter.setValue((counter.value(forKey: "value") as? Int64 ?? 0) + 1, forKey: "value")
                    do {
                        try counting.save()
                        return true
                    } catch let error as CoreDataError where error.code == .managedObjectMerge {
                        counting.rollback()
                        counting.refreshAllObjects()
                        return false
                    }
                }
                if saved { break }
                conflicts += 1
            }
            written.append("count")
            // An entry of our own: its serial and its key must be nobody else's.
            let uri = try counting.performAndWait { () throws -> String in
                let entry = ManagedObject(entity: model.entitiesByName["Entry"]!, insertInto: counting)
                serial += 1
                entry.setValue(Int64(worker) * 1_000_000_000 + serial, forKey: "serial")
                entry.setValue(Int64(worker), forKey: "batch")
                try counting.save()
                return entry.objectID.uriRepresentation().lastPathComponent
            }
            written.append("entry \(uri)")
            // The shared account, under this worker's merge policy.
            try shared.performAndWait { () throws in
                let request = FetchRequest<ManagedObject>(entityName: "Account")
                request.predicate = FetchPredicate(format: "number >= 0")
                request.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)]
                guard let account = try shared.fetch(request).first else { return }
                account.setValue(Int64(worker + 1) * 10, forKey: "number")
                do {
                    try shared.save()
                } catch let error as CoreDataError where error.code == .managedObjectMerge && policyName == "error" {
                    shared.rollback()
                }
            }
            if serial % 10 == 0 {
                _ = try counting.performAndWait {
                    try counting.execute(BatchUpdateRequest(entityName: "Entry", predicate: FetchPredicate(format: "batch == %lld", Int64(worker)), propertiesToUpdate: ["amount": serial]))
                }
            }
            if serial % 5 == 0 { try followHistory() }
        }
        // Everyone stops writing by the deadline; wait for the slowest, then follow history once more.
        sleep(2)
        try followHistory()
        let (value, entries) = try view.performAndWait { () throws -> (Int64, Int) in
            (held.first?.value(forKey: "value") as? Int64 ?? -1, try view.count(for: FetchRequest<ManagedObject>(entityName: "Entry")))
        }
        say("converged \(value) \(entries) conflicts \(conflicts)")
    }

    static func runCreate(rounds: Int, directory: URL) -> ScenarioResult {
        var result = ScenarioResult(scenario: "8 processes create one new store", rounds: 0)
        let started = Date()
        for round in 0..<rounds {
            let store = directory.appendingPathComponent("create-\(round).sqlite").path
            do {
                let pipes = (0..<8).map { _ in Pipe() }
                let children = try pipes.map { try Child.start(["work-create", store], output: $0.fileHandleForWriting) }
                for child in children { child.waitUntilExit() }
                let identifiers = pipes.map { pipe in
                    try? pipe.fileHandleForWriting.close()
                    return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                }
                let stored = try RawStore(store).rows("SELECT Z_UUID FROM Z_METADATA").first?.first as? String
                guard Set(identifiers).count == 1, identifiers[0] == stored else {
                    throw Failure("the processes name the store \(Set(identifiers).sorted()), the file \(stored ?? "nothing")")
                }
            } catch {
                result.record(error, round: round)
            }
            result.rounds += 1
            removeStore(store)
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    static func run(processes: Int, seconds: Double, directory: URL) -> ScenarioResult {
        var result = ScenarioResult(scenario: "\(processes) processes on one store", rounds: 1)
        let started = Date()
        let store = directory.appendingPathComponent("many.sqlite").path
        do {
            let container = try open(store)
            try container.viewContext.performAndWait { () throws in try Workload.perform(.setup, number: 0, in: container.viewContext) }
            try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
            let pipes = (0..<processes).map { _ in Pipe() }
            let ledgers = (0..<processes).map { store + ".ledger-\($0)" }
            let children = try (0..<processes).map { try Child.start(["work-counter", store, String($0), String(seconds), ledgers[$0]], output: pipes[$0].fileHandleForWriting) }
            for child in children { child.waitUntilExit() }
            let reports = pipes.map { pipe in
                try? pipe.fileHandleForWriting.close()
                return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            if let failed = children.firstIndex(where: { $0.terminationStatus != 0 }) { throw Failure("worker \(failed) failed (exit \(children[failed].terminationStatus))") }
            let lines = ledgers.flatMap(Ledger.lines)
            let increments = lines.filter { $0 == "count" }.count
            let keys = lines.filter { $0.hasPrefix("entry ") }
            let raw = try RawStore(store)
            let integrity = try raw.integrity()
            guard integrity == "ok" else { throw Failure("integrity_check: \(integrity)") }
            let counter = try raw.integer("SELECT ZVALUE FROM ZCOUNTER")
            let entries = try raw.integer("SELECT COUNT(*) FROM ZENTRY")
            let duplicateSerials = try raw.integer("SELECT COUNT(*) FROM (SELECT ZSERIAL FROM ZENTRY GROUP BY ZSERIAL HAVING COUNT(*) > 1)")
            let duplicateKeys = keys.count - Set(keys).count
            result.details["increments acknowledged"] = String(increments)
            result.details["counter in the file"] = String(counter)
            result.details["entries acknowledged / in the file"] = "\(keys.count) / \(entries)"
            result.details["duplicate keys / serials"] = "\(duplicateKeys) / \(duplicateSerials)"
            result.details["workers' views (counter, entries, conflicts retried)"] = reports.map { $0.replacingOccurrences(of: "converged ", with: "") }.joined(separator: "; ")
            if counter != Int64(increments) { result.lost += 1; throw Failure("lost updates: the counter is \(counter), \(increments) increments were acknowledged") }
            if entries != Int64(keys.count) { result.lost += 1; throw Failure("\(keys.count) entries acknowledged, \(entries) in the file") }
            if duplicateKeys + Int(duplicateSerials) > 0 { throw Failure("\(duplicateKeys) keys and \(duplicateSerials) serials handed out twice") }
            let problems = try raw.keyCountersProblems()
            if !problems.isEmpty { throw Failure("key counters: \(problems.joined(separator: ", "))") }
            let expected = "\(counter) \(entries)"
            let disagreeing = reports.filter { !$0.hasPrefix("converged \(expected) ") }
            if !disagreeing.isEmpty { throw Failure("\(disagreeing.count) workers did not converge to \(expected): \(disagreeing)") }
        } catch {
            result.record(error, round: 0)
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }
}
