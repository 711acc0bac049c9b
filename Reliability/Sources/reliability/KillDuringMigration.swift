import Foundation
import OpenCoreData

/// kill -9 during a migration, at every phase, with and without another process holding the
/// store open and writing: afterwards the file is exactly the old version or exactly the new
/// one, passes `integrity_check`, and holds every save any process acknowledged.
///
/// The migrator prints where it is (`start`, `copy n/total`, `copied`, `done`); it is killed after
/// a random delay, and the round counts for the last phase it reached. Rounds go on until every
/// phase has its share.
enum KillDuringMigration {
    static let phases = ["starting", "copying rows", "replacing the store", "migrated"]
    static let templateEntries = 12_000

    /// In the child: opens the store with the new model (which migrates it), printing progress.
    static func migrate(store: String, stay: Bool) throws {
        say("start")
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model(version: 2))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.setOption({ @Sendable (progress: MigrationProgress) in
            say(progress.completedRows == progress.totalRows ? "copied" : "copy \(progress.completedRows)/\(progress.totalRows)")
        } as @Sendable (MigrationProgress) -> Void, forKey: MigrationProgressHandlerOption)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        say("done")
        // Killed here too, with the migrated store open (unless only timing a migration).
        if stay { sleep(60) }
    }

    /// In the other child: saves with the old model, one entry per save, acknowledged in the
    /// ledger, until a save is refused (the store was migrated under it) or it is killed.
    static func write(store: String, ledger: String, first: Int64) throws {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model(version: 1))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.shouldMigrateStoreAutomatically = false
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        try writeEntries(into: container, ledger: ledger, first: first)
    }

    /// Saves one entry after another with the container's (old) model, each acknowledged in the
    /// ledger, until a save is refused because the store was migrated under it (134100).
    static func writeEntries(into container: PersistentContainer, ledger: String, first: Int64) throws {
        guard let entity = container.managedObjectModel.entitiesByName["Entry"] else { throw Failure("no Entry entity") }
        let acknowledged = try Ledger(ledger)
        let context = container.newBackgroundContext()
        var number = first
        while true {
            do {
                try context.performAndWait { () throws in
                    ManagedObject(entity: entity, insertInto: context).setValue(1_000_000 + number, forKey: "batch")
                    try context.save()
                }
            } catch let error as CoreDataError where error.code == .persistentStoreIncompatibleVersionHash {
                // The store was migrated under this process: its saves are refused, as they must be.
                return
            }
            acknowledged.append(String(number))
            number += 1
        }
    }

    /// A version-1 store with `templateEntries` entries, checkpointed into one file.
    static func makeTemplate(at path: String) throws {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model(version: 1))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            try Workload.perform(.setup, number: 0, in: context)
            let rows: [[String: Any]] = (0..<templateEntries).map { ["batch": Int64($0 / 100), "serial": Int64($0), "amount": Int64(1)] }
            _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: rows))
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        _ = try RawStore(path, writable: true).rows("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Which model version the file's metadata names (1 or 2), or a failure.
    static func version(of raw: RawStore) throws -> Int {
        guard let plist = try raw.rows("SELECT Z_PLIST FROM Z_METADATA").first?.first as? Data,
              let metadata = try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any],
              let hashes = metadata["NSStoreModelVersionHashes"] as? [String: Data] else {
            throw Failure("torn: the store's metadata cannot be read")
        }
        for version in [1, 2] where hashes == Workload.model(version: version).entityVersionHashesByName { return version }
        throw Failure("torn: the store's metadata names neither model version")
    }

    static func check(store: String, ledger: String) throws -> Int {
        let raw = try RawStore(store)
        let integrity = try raw.integrity()
        guard integrity == "ok" else { throw Failure("integrity_check: \(integrity)") }
        let version = try version(of: raw)
        let columns = try raw.rows("SELECT name FROM pragma_table_info('ZENTRY')").compactMap { $0.first as? String }
        guard columns.contains("ZMEMO") == (version == 2) else { throw Failure("torn: version \(version) metadata over a version \(columns.contains("ZMEMO") ? 2 : 1) table") }
        let template = try raw.integer("SELECT COUNT(*) FROM ZENTRY WHERE ZBATCH < 1000000")
        guard template == Int64(templateEntries) else { throw Failure("missing: \(template) of the \(templateEntries) entries the store had before") }
        let written = Set(try raw.rows("SELECT ZBATCH - 1000000 FROM ZENTRY WHERE ZBATCH >= 1000000").compactMap { $0.first as? Int64 })
        let acknowledged = Set(Ledger.lines(ledger).compactMap { Int64($0) })
        let missing = acknowledged.subtracting(written)
        guard missing.isEmpty else { throw Failure("missing: \(missing.count) acknowledged saves of the other process (\(missing.sorted().prefix(5)))") }
        if version == 2 {
            let unset = try raw.integer("SELECT COUNT(*) FROM ZENTRY WHERE ZMEMO IS NOT 'migrated'")
            guard unset == 0 else { throw Failure("torn: \(unset) migrated entries without the new attribute's default") }
        }
        let problems = try raw.keyCountersProblems()
        guard problems.isEmpty else { throw Failure("key counters: \(problems.joined(separator: ", "))") }
        // And the library opens it with the new model (migrating it now if it is still old).
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model(version: 2))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let count = try container.viewContext.performAndWait { try container.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) }
        guard count == templateEntries + written.count else { throw Failure("missing: the library counts \(count) entries, the file \(templateEntries + written.count)") }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        return version
    }

    static func run(roundsPerPhase: Int, directory: URL, seed: UInt64) -> [ScenarioResult] {
        var random = SeededGenerator(seed: seed ^ 0x5EED)
        let template = directory.appendingPathComponent("migration-template.sqlite").path
        var results: [ScenarioResult] = []
        for withWriter in [false, true] {
            let name = withWriter ? "kill -9 during migration, another process writing" : "kill -9 during migration"
            var perPhase = Dictionary(uniqueKeysWithValues: phases.map { ($0, ScenarioResult(scenario: "\(name): \($0)", rounds: 0)) })
            let started = Date()
            do {
                if !FileManager.default.fileExists(atPath: template) { try makeTemplate(at: template) }
            } catch {
                var failed = ScenarioResult(scenario: name, rounds: 1)
                failed.record(error, round: 0)
                return [failed]
            }
            // Round 0 is not killed: the times at which its migrator reached each phase give
            // each phase a window (refined by every later round's markers); later rounds kill
            // inside the window of the phase that has the fewest rounds so far.
            var windows = phases.map { _ in 0.0...0.5 }
            var markers: [Double?] = [nil, nil, nil]
            var round = 0
            while phases.contains(where: { perPhase[$0]!.rounds < roundsPerPhase }) && round < roundsPerPhase * phases.count * 3 {
                let store = directory.appendingPathComponent("migrate-\(withWriter)-\(round).sqlite").path
                let ledger = store + ".ledger"
                var phase = phases[0]
                do {
                    try FileManager.default.copyItem(atPath: template, toPath: store)
                    var writer: Process?
                    if withWriter {
                        writer = try Child.start(["work-writer", store, ledger, "0"])
                        usleep(UInt32.random(in: 50_000...250_000, using: &random))
                    }
                    let output = Pipe()
                    let reached = Shared<[(String, Double)]>([])
                    let begin = Date()
                    output.fileHandleForReading.readabilityHandler = { handle in
                        let lines = String(decoding: handle.availableData, as: UTF8.self).split(separator: "\n").map(String.init)
                        let now = Date().timeIntervalSince(begin)
                        reached.withLock { $0 += lines.map { ($0, now) } }
                    }
                    let migrator = try Child.start(["work-migrate", store, round == 0 ? "exit" : "stay"], output: output.fileHandleForWriting)
                    let target = phases.min { perPhase[$0]!.rounds < perPhase[$1]!.rounds }!
                    let window = windows[phases.firstIndex(of: target)!]
                    let delay = round == 0 ? 60.0 : Double.random(in: window, using: &random)
                    while migrator.isRunning && Date().timeIntervalSince(begin) < delay { usleep(500) }
                    Child.kill(migrator)
                    usleep(20_000)
                    output.fileHandleForReading.readabilityHandler = nil
                    let printed = reached.withLock { $0 }
                    // Every round's markers refine the windows (a machine busy with other work
                    // in round 0 must not skew the rest).
                    func time(_ prefix: String) -> Double? { printed.first { $0.0.hasPrefix(prefix) }?.1 }
                    for (index, prefix) in ["copy ", "copied", "done"].enumerated() {
                        guard let seen = time(prefix) else { continue }
                        markers[index] = round == 0 || markers[index] == nil ? seen : 0.8 * markers[index]! + 0.2 * seen
                    }
                    let copied = markers[1] ?? 0.3, done = max(markers[2] ?? copied + 0.1, copied)
                    let copying = min(markers[0] ?? copied * 0.7, copied)
                    windows = [0...copying, copying...copied, copied...done, done...(done + 0.05)]
                    let names = printed.map(\.0)
                    phase = names.contains("done") ? phases[3] : names.contains("copied") ? phases[2] : names.contains(where: { $0.hasPrefix("copy ") }) ? phases[1] : phases[0]
                    if let writer { Child.kill(writer) }
                    if migrator.terminationReason == .exit && migrator.terminationStatus != 0 { throw Failure("the migrator failed (exit \(migrator.terminationStatus))") }
                    _ = try check(store: store, ledger: ledger)
                    perPhase[phase]!.operations += Ledger.lines(ledger).count
                } catch {
                    perPhase[phase]!.record(error, round: round)
                    perPhase[phase]!.noteTornOrLost(error)
                }
                perPhase[phase]!.rounds += 1
                removeStore(store)
                try? FileManager.default.removeItem(atPath: ledger)
                round += 1
            }
            let seconds = Date().timeIntervalSince(started)
            for phase in phases {
                var result = perPhase[phase]!
                result.seconds = seconds * Double(result.rounds) / Double(max(round, 1))
                if withWriter { result.details["saves the other process had acknowledged"] = String(result.operations) }
                results.append(result)
            }
        }
        return results
    }
}
