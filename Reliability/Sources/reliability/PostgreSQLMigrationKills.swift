import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// kill -9 during a PostgreSQL schema's migration while another process writes with the old
/// model (`Reliability/run --postgres`): a schema of version 1 with `templateEntries` entries; a
/// writer saves one entry per save and acknowledges each in a ledger; a migrator opens the schema
/// with version 2 (which migrates it) and is killed after a random delay. Afterwards the schema
/// is exactly version 1 or exactly version 2 (it opens with one model and no migration), holds
/// every entry it had and every save the writer acknowledged, with the new attribute's default
/// on every entry when migrated, and the library migrates it (again) when it is still old.
enum PostgreSQLMigrationKills {
    static let scenario = "PostgreSQL: kill -9 during a migration, another process writing"
    static let templateEntries = 2_000

    static func open(_ url: URL, version: Int, migrating: Bool) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model(version: version))
        let description = PersistentStoreDescription(url: url, type: .postgreSQL)
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.shouldMigrateStoreAutomatically = migrating
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// In the child: opens the schema with version 2 (migrating it), says so, and stays open.
    static func migrate(url: String) throws {
        guard let url = URL(string: url) else { throw Failure("bad URL \(url)") }
        let container = try open(url, version: 2, migrating: true)
        say("done")
        sleep(60)
        Workload.close(container)
    }

    /// In the other child: one entry per save with version 1, acknowledged in the ledger, until a
    /// save is refused because the schema was migrated under it (or it is killed).
    static func write(url: String, ledger: String) throws {
        guard let url = URL(string: url) else { throw Failure("bad URL \(url)") }
        try KillDuringMigration.writeEntries(into: try open(url, version: 1, migrating: false), ledger: ledger, first: 0)
    }

    /// A new schema of version 1 with `templateEntries` entries.
    static func makeSchema(_ url: URL) throws {
        let container = try open(url, version: 1, migrating: false)
        defer { Workload.close(container) }
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let rows: [[String: Any]] = (0..<templateEntries).map { ["batch": Int64($0 / 100), "serial": Int64($0), "amount": Int64(1)] }
            _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
        }
    }

    /// The schema's version as the library finds it without migrating (1 or 2), after checking
    /// what each version holds.
    static func check(_ url: URL, ledger: String) throws -> Int {
        let acknowledged = Set(Ledger.lines(ledger).compactMap { Int64($0) })
        var version: Int?
        for candidate in [1, 2] {
            guard let container = try? open(url, version: candidate, migrating: false) else { continue }
            defer { Workload.close(container) }
            guard version == nil else { throw Failure("torn: the schema opens with both model versions") }
            version = candidate
            try checkContent(container, version: candidate, acknowledged: acknowledged)
        }
        guard let version else { throw Failure("torn: the schema opens with neither model version unmigrated") }
        // The app goes on: the library migrates it now if it is still old.
        let container = try open(url, version: 2, migrating: true)
        defer { Workload.close(container) }
        try checkContent(container, version: 2, acknowledged: acknowledged)
        return version
    }

    private static func checkContent(_ container: PersistentContainer, version: Int, acknowledged: Set<Int64>) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let entries = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry"))
            let batches = entries.compactMap { $0.value(forKey: "batch") as? Int64 }
            let template = batches.filter { $0 < 1_000_000 }.count
            guard template == templateEntries else { throw Failure("missing: \(template) of the \(templateEntries) entries the schema had before (version \(version))") }
            let written = batches.filter { $0 >= 1_000_000 }.map { $0 - 1_000_000 }
            guard Set(written).count == written.count else { throw Failure("torn: a save of the other process is there twice (version \(version))") }
            let missing = acknowledged.subtracting(written)
            guard missing.isEmpty else { throw Failure("missing: \(missing.count) acknowledged saves of the other process (version \(version): \(missing.sorted().prefix(5)))") }
            if version == 2 {
                let unset = entries.filter { $0.value(forKey: "memo") as? String != "migrated" }.count
                guard unset == 0 else { throw Failure("torn: \(unset) migrated entries without the new attribute's default") }
            }
        }
    }

    static func run(rounds: Int, cluster: PostgreSQLServerFaults.Cluster, directory: URL, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        var random = SeededGenerator(seed: seed ^ 0x9E_5C)
        let started = Date()
        // Round 0 is not killed: how long a migration takes bounds the later rounds' delays.
        var duration = 2.0
        var versions = [1: 0, 2: 0]
        for round in 0..<rounds {
            let ledger = directory.appendingPathComponent("pg-migration-\(round).ledger").path
            do {
                let url = try PostgreSQLServerFaults.storeURL(cluster, schema: "reliability_migration_\(round)_\(UInt32.random(in: 0...UInt32.max, using: &random))")
                try makeSchema(url)
                let writer = try Child.start(["work-pg-writer", url.absoluteString, ledger])
                usleep(UInt32.random(in: 50_000...250_000, using: &random))
                let output = Pipe()
                let done = Shared<Bool>(false)
                output.fileHandleForReading.readabilityHandler = { handle in
                    if String(decoding: handle.availableData, as: UTF8.self).contains("done") { done.withLock { $0 = true } }
                }
                let begin = Date()
                let migrator = try Child.start(["work-pg-migrate", url.absoluteString], output: output.fileHandleForWriting)
                let delay = round == 0 ? 60.0 : Double.random(in: 0...(duration * 1.2), using: &random)
                while migrator.isRunning && !(round == 0 && done.withLock { $0 }) && Date().timeIntervalSince(begin) < delay { usleep(1_000) }
                if round == 0 { duration = max(0.2, Date().timeIntervalSince(begin)) }
                Child.kill(migrator)
                usleep(20_000)
                output.fileHandleForReading.readabilityHandler = nil
                Child.kill(writer)
                if migrator.terminationReason == .exit && migrator.terminationStatus != 0 { throw Failure("the migrator failed (exit \(migrator.terminationStatus))") }
                versions[try check(url, ledger: ledger), default: 0] += 1
                result.operations += Ledger.lines(ledger).count
            } catch {
                result.record(error, round: round)
                result.noteTornOrLost(error)
            }
            try? FileManager.default.removeItem(atPath: ledger)
            result.rounds += 1
        }
        result.seconds = Date().timeIntervalSince(started)
        result.details["rounds killed before the migration committed"] = String(versions[1] ?? 0)
        result.details["rounds killed after it committed"] = String(versions[2] ?? 0)
        result.details["saves the other process had acknowledged"] = String(result.operations)
        return result
    }
}
