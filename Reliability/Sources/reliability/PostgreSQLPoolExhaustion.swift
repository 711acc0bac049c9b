import Foundation
import OpenCoreData

/// More writers than connections (`Reliability/run --postgres`): eight writers, each with a
/// context of its own, save through one coordinator whose pool holds two connections (`pool=2`).
/// Each save waits for a free connection and none may fail for want of one (the pool's wait ends
/// at 60 s; a save here takes milliseconds) or take longer than the faults' deadline; afterwards
/// the checks of the crash scenario: every acknowledged operation whole, none torn.
enum PostgreSQLPoolExhaustion {
    static let scenario = "PostgreSQL: 8 writers on a pool of 2 connections"
    static let writers: Int64 = 8

    static func run(rounds: Int, cluster: PostgreSQLServerFaults.Cluster, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        var random = SeededGenerator(seed: seed)
        let started = Date()
        var tally = PostgreSQLServerFaults.Tally()
        for round in 0..<rounds {
            do {
                let schema = "reliability_pool_\(UInt32.random(in: 0...UInt32.max, using: &random))"
                var components = URLComponents(url: try PostgreSQLServerFaults.storeURL(cluster, schema: schema), resolvingAgainstBaseURL: false)
                components?.queryItems?.append(URLQueryItem(name: "pool", value: "2"))
                guard let url = components?.url else { throw Failure("bad URL \(cluster.url)") }
                let container = try PostgreSQLServerFaults.open(url)
                let answers = PostgreSQLServerFaults.Answers()
                let threads = (0..<writers).map { index in
                    Thread { PostgreSQLServerFaults.write(container, answers: answers, first: index, step: writers) }
                }
                threads.forEach { $0.start() }
                usleep(UInt32.random(in: 2_000_000...4_000_000, using: &random))
                answers.stop()
                while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
                let (acknowledged, refused, _) = answers.snapshot
                for (operation, error) in refused.sorted(by: { $0.key < $1.key }).prefix(3) {
                    result.record(Failure("operation \(operation) failed with every writer waiting its turn: \(error)"), round: round)
                }
                if answers.longestSave > PostgreSQLServerFaults.saveDeadline {
                    result.record(Failure(String(format: "a save took %.1f s waiting for a connection", answers.longestSave)), round: round)
                }
                if acknowledged.count < Int(writers) {
                    result.record(Failure("only \(acknowledged.count) saves were acknowledged in the round"), round: round)
                }
                try PostgreSQLServerFaults.check(url, answers: answers, into: &result)
                tally.add(answers)
            } catch {
                result.record(error, round: round)
            }
            result.rounds += 1
        }
        tally.report(into: &result)
        result.seconds = Date().timeIntervalSince(started)
        return result
    }
}
