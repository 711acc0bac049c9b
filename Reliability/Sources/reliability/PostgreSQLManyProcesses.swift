import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Eight processes add one new PostgreSQL schema's store at once (`Reliability/run --postgres`):
/// the tables are created once, and every process, and the schema's metadata read afterwards,
/// names one store UUID.
enum PostgreSQLManyProcesses {
    static let scenario = "PostgreSQL: 8 processes create one new schema"

    /// In the child: adds the store (creating the schema's tables unless another process did) and
    /// prints its UUID.
    static func create(url: String) throws {
        guard let url = URL(string: url) else { throw Failure("bad URL \(url)") }
        let container = try PostgreSQLMigrationKills.open(url, version: 1, migrating: false)
        say(container.persistentStoreCoordinator.persistentStores[0].identifier)
        Workload.close(container)
    }

    static func runCreate(rounds: Int, cluster: PostgreSQLServerFaults.Cluster, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        var random = SeededGenerator(seed: seed ^ 0xC8EA7E)
        let started = Date()
        for round in 0..<rounds {
            do {
                let url = try PostgreSQLServerFaults.storeURL(cluster, schema: "reliability_create_\(round)_\(UInt32.random(in: 0...UInt32.max, using: &random))")
                let pipes = (0..<8).map { _ in Pipe() }
                let children = try pipes.map { try Child.start(["work-pg-create", url.absoluteString], output: $0.fileHandleForWriting) }
                for child in children { child.waitUntilExit() }
                if let failed = children.firstIndex(where: { $0.terminationStatus != 0 }) { throw Failure("process \(failed) could not add the store (exit \(children[failed].terminationStatus))") }
                let identifiers = pipes.map { pipe in
                    try? pipe.fileHandleForWriting.close()
                    return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                }
                let stored = try PersistentStoreCoordinator.metadataForPersistentStore(type: .postgreSQL, at: url)["NSStoreUUID"] as? String
                guard Set(identifiers).count == 1, identifiers[0] == stored else {
                    throw Failure("torn: the processes name the store \(Set(identifiers).sorted()), the schema \(stored ?? "nothing")")
                }
            } catch {
                result.record(error, round: round)
                result.noteTornOrLost(error)
            }
            result.rounds += 1
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }
}
