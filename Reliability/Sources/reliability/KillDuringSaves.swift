import Foundation
import OpenCoreData

/// kill -9 during saves: a worker runs the seeded workload and appends each acknowledged
/// operation to an fsynced ledger; it is killed at a random moment; then the file must pass
/// `integrity_check`, hold every acknowledged operation in full and no partial one (exactly the
/// state after the acknowledged operations, or after one more: the one in flight may have
/// committed before its acknowledgement was written), keep `Z_MAX ≥ MAX(Z_PK)`, and have one
/// history transaction per committed operation.
enum KillDuringSaves {
    static let storeOptions: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true]

    /// In the child: operations `first`… until killed (or `limit` operations).
    static func work(store: String, ledger: String, seed: UInt64, first: Int64, limit: Int64) throws {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        for (key, value) in storeOptions { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let acknowledged = try Ledger(ledger)
        let context = container.newBackgroundContext()
        var state = Workload.replay(through: first - 1, seed: seed)
        for number in first..<(first + limit) {
            let operation = Workload.plan(number, seed: seed, state: state)
            try context.performAndWait { () throws in try Workload.perform(operation, number: number, in: context) }
            acknowledged.append(String(number))
            state.apply(operation, number: number)
        }
    }

    /// The last operation the ledger acknowledges (-1: none).
    static func lastAcknowledged(_ ledger: String) -> Int64 {
        Ledger.lines(ledger).compactMap { Int64($0) }.max() ?? -1
    }

    /// Checks the file after a kill; returns the last operation it holds.
    static func check(store: String, seed: UInt64, acknowledged: Int64) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: store) else {
            if acknowledged >= 0 { throw Failure("the store is gone after \(acknowledged + 1) acknowledged operations") }
            return -1
        }
        let raw = try RawStore(store)
        let integrity = try raw.integrity()
        guard integrity == "ok" else { throw Failure("integrity_check: \(integrity)") }
        guard try !raw.rows("SELECT 1 FROM sqlite_master WHERE name = 'ZCOUNTER'").isEmpty else {
            if acknowledged >= 0 { throw Failure("the store has no tables after \(acknowledged + 1) acknowledged operations") }
            return -1
        }
        let problems = try raw.keyCountersProblems()
        guard problems.isEmpty else { throw Failure("key counters: \(problems.joined(separator: ", "))") }
        let found = try Workload.read(raw)
        let expected = Workload.replay(through: acknowledged, seed: seed)
        if found == expected { return acknowledged }
        let oneMore = Workload.replay(through: acknowledged + 1, seed: seed)
        if found == oneMore { return acknowledged + 1 }
        throw Failure("after operation \(acknowledged) (acknowledged) the store holds \(Workload.describe(found)); expected \(Workload.describe(expected)) or, with the one in flight, \(Workload.describe(oneMore))")
    }

    static func run(rounds: Int, directory: URL, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: "kill -9 during saves", rounds: 0)
        var random = SeededGenerator(seed: seed)
        let started = Date()
        var store = "", ledger = "", runSeed: UInt64 = 0, next: Int64 = 0, inFlight = 0
        for round in 0..<rounds {
            // A new store every 25 rounds keeps each one small (and covers killing its creation).
            if round % 25 == 0 {
                if !store.isEmpty { removeStore(store) }
                store = directory.appendingPathComponent("saves-\(round).sqlite").path
                ledger = store + ".ledger"
                runSeed = random.next()
                next = 0
            }
            do {
                let child = try Child.start(["work-saves", store, ledger, String(runSeed), String(next), "100000"])
                usleep(UInt32.random(in: 20_000...700_000, using: &random))
                Child.kill(child)
                if child.terminationReason == .exit && child.terminationStatus != 0 {
                    throw Failure("the worker failed (exit \(child.terminationStatus)) after operation \(lastAcknowledged(ledger))")
                }
                let acknowledged = lastAcknowledged(ledger)
                let held = try check(store: store, seed: runSeed, acknowledged: acknowledged)
                if held > acknowledged {
                    // Committed, killed before its acknowledgement: allowed, and now known.
                    Ledger(ledgerPath: ledger)?.append(String(held))
                    inFlight += 1
                }
                result.operations += Int(held + 1 - next)
                next = held + 1
            } catch {
                result.record(error, round: round)
                if error is Failure { result.noteTornOrLost(error) }
                // Start over on a new store: this one is not trustworthy.
                next = 0
                store = directory.appendingPathComponent("saves-\(round)-again.sqlite").path
                ledger = store + ".ledger"
            }
            result.rounds += 1
        }
        result.seconds = Date().timeIntervalSince(started)
        result.details["operations committed"] = String(result.operations)
        result.details["rounds whose operation in flight had committed"] = String(inFlight)
        return result
    }
}

extension Ledger {
    convenience init?(ledgerPath: String) { try? self.init(ledgerPath) }
}
