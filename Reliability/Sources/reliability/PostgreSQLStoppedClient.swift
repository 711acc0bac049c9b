import Foundation
import OpenCoreData

/// A client that stops mid-save while another writes the same row (`Reliability/run --postgres`):
/// two writers share one row (`PostgreSQLServerFaults.write(sharing:)`), one of them through the
/// loopback proxy with the URL's `idle_in_transaction_session_timeout=2`. Each round the proxy
/// black-holes that writer's next COMMIT: to the server the client went quiet mid-transaction,
/// holding the shared row, as a process frozen in a debugger or cut off behind a partition
/// leaves it. The server must end that session at the idle limit, so the other writer — straight
/// to the server, statement timeout 5 s — is never refused and never waits much past 2 s for the
/// row; the stopped writer's save is resolved (its transaction was rolled back: an ordinary
/// error, nothing written) and the same context saves again. Afterwards the crash scenario's
/// checks over both writers' operations, and the shared row holds an operation that was not
/// refused.
enum PostgreSQLStoppedClient {
    static let scenario = "PostgreSQL: a client stopped mid-save while another writes its row"
    /// The idle limit, and the longest the other writer may wait for the row (the limit, and the
    /// rest of a save on a loaded machine; a save the limit did not free waits 5 s and fails).
    static let idleLimit = 2
    static let otherSaveDeadline: TimeInterval = 4.5

    static func run(rounds: Int, cluster: PostgreSQLServerFaults.Cluster, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        var random = SeededGenerator(seed: seed)
        let started = Date()
        let (stopping, other) = (PostgreSQLServerFaults.Answers(), PostgreSQLServerFaults.Answers())
        var proxy: TCPProxy?
        defer { proxy?.stop() }
        do {
            guard let serverPort = cluster.url.port else { throw Failure("no port in \(cluster.url)") }
            let through = try TCPProxy(upstreamPort: serverPort)
            proxy = through
            let schema = "reliability_stopped_\(UInt32.random(in: 0...UInt32.max, using: &random))"
            let url = try PostgreSQLServerFaults.storeURL(cluster, schema: schema)
            let direct = try PostgreSQLServerFaults.open(url)
            let proxied = try PostgreSQLServerFaults.open(try PostgreSQLServerFaults.storeURL(
                cluster, schema: schema, port: through.port, [URLQueryItem(name: "idle_in_transaction_session_timeout", value: String(idleLimit))]))
            let seeding = direct.newBackgroundContext()
            try seeding.performAndWait { () throws in
                guard let entity = direct.managedObjectModel.entitiesByName["Tally"] else { throw Failure("no Tally entity") }
                ManagedObject(entity: entity, insertInto: seeding).setValue(Int64(-1), forKey: "operation")   // no writer's
                try seeding.save()
            }
            let writers = [Thread { PostgreSQLServerFaults.write(proxied, answers: stopping, first: 0, step: 2, sharing: true) },
                           Thread { PostgreSQLServerFaults.write(direct, answers: other, first: 1, step: 2, sharing: true) }]
            writers.forEach { $0.start() }
            defer {
                stopping.stop()
                other.stop()
                while writers.contains(where: { !$0.isFinished }) { usleep(10_000) }
            }
            for round in 0..<rounds {
                usleep(UInt32.random(in: 200_000...800_000, using: &random))
                let before = stopping.acknowledgedCount
                through.blackHole(atSending: "COMMIT\u{0}")
                let armedUntil = Date().addingTimeInterval(10)
                while through.isArmed && Date() < armedUntil { usleep(10_000) }
                if through.isArmed {
                    result.record(Failure("the stopped writer sent no COMMIT within 10 s"), round: round)
                }
                // The stopped writer saves again, nothing reopened, once its save was resolved.
                let deadline = Date().addingTimeInterval(30)
                while stopping.acknowledgedCount <= before && Date() < deadline { usleep(20_000) }
                if stopping.acknowledgedCount <= before {
                    result.record(Failure("the stopped writer's context saved nothing within 30 s of the fault"), round: round)
                }
                result.rounds += 1
            }
            stopping.stop()
            other.stop()
            while writers.contains(where: { !$0.isFinished }) { usleep(10_000) }
            for (operation, error) in other.snapshot.refused.sorted(by: { $0.key < $1.key }).prefix(3) {
                result.record(Failure("operation \(operation) of the other writer was refused: \(error)"), round: -1)
            }
            if other.longestSave > otherSaveDeadline {
                result.record(Failure(String(format: "the other writer waited %.1f s for the row, past the %d s idle limit", other.longestSave, idleLimit)),
                              round: -1)
            }
            if stopping.longestSave > PostgreSQLServerFaults.saveDeadline {
                result.record(Failure(String(format: "a save of the stopped writer took %.1f s, past its deadline", stopping.longestSave)), round: -1)
            }
            try PostgreSQLServerFaults.check(url, answers: stopping, other, into: &result)
            try checkSharedRow(url, answers: stopping, other, into: &result)
        } catch {
            result.record(error, round: result.rounds)
        }
        var tally = PostgreSQLServerFaults.Tally()
        tally.add(stopping)
        tally.add(other)
        tally.report(into: &result)
        result.details["saves of the other writer refused"] = String(other.snapshot.refused.count)
        result.details["longest save of the other writer (s)"] = String(format: "%.1f", other.longestSave)
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// The shared row holds the operation of a save that was acknowledged or whose outcome was
    /// unknown: never one reported failed.
    private static func checkSharedRow(_ url: URL, answers: PostgreSQLServerFaults.Answers..., into result: inout ScenarioResult) throws {
        let reader = try PostgreSQLServerFaults.open(url)
        let context = reader.newBackgroundContext()
        let value = try context.performAndWait { () throws -> Int64? in
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Tally")).first?.value(forKey: "operation") as? Int64
        }
        guard let value else { throw Failure("the shared row is gone") }
        let refused = answers.contains { $0.snapshot.refused[value] != nil }
        if refused {
            result.torn += 1
            result.record(Failure("the shared row holds operation \(value), whose save was reported failed"), round: -1)
        }
    }
}
