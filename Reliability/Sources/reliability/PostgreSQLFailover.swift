import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Failover during saves (`Reliability/run --postgres`): each round starts a primary and a hot
/// standby of its own (`.ci/postgres-server start`, `standby`), made synchronous (a COMMIT is
/// acknowledged once the standby has it), and opens the store with the standby named in the
/// URL (`replicas=`). The writer of `PostgreSQLServerFaults` saves operations of `parts` rows
/// each; meanwhile the primary crashes (`pg_ctl stop -m immediate`) and the standby is promoted.
/// The same context must save again within 30 s, on the promoted standby, nothing reopened.
/// Afterwards, read through a new coordinator from the promoted standby: every acknowledged
/// operation holds all its rows (else lost), none holds some of them (torn), a save reported
/// failed wrote nothing, and the keys allocated after the failover did not reuse one from before
/// (a reused key would fail its insert; the rows of an operation are checked by count).
enum PostgreSQLFailover {
    static let scenario = "PostgreSQL: failover to a synchronous standby during saves"

    static func run(rounds: Int, script: String, seed: UInt64) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        var random = SeededGenerator(seed: seed)
        let started = Date()
        var tally = PostgreSQLServerFaults.Tally()
        var recovery: TimeInterval = 0
        for round in 0..<rounds {
            let pair = PostgreSQLServerPair(script: PostgreSQLServerScript(path: script))
            defer { pair.stop() }
            do {
                let primary = try pair.start()
                let standby = try pair.startStandby()
                try pair.makeSynchronous()
                let url = try storeURL(primary, standby: standby)
                let answers = PostgreSQLServerFaults.Answers()
                let container = try PostgreSQLServerFaults.open(url)
                let writer = Thread { PostgreSQLServerFaults.write(container, answers: answers) }
                writer.start()
                defer {
                    answers.stop()
                    while !writer.isFinished { usleep(10_000) }
                }
                usleep(UInt32.random(in: 300_000...1_000_000, using: &random))
                let before = answers.acknowledgedCount
                try pair.crashPrimary()
                usleep(UInt32.random(in: 0...300_000, using: &random))
                let failedOver = Date()
                try pair.promoteStandby()
                let deadline = Date().addingTimeInterval(30)
                while answers.acknowledgedCount <= before && Date() < deadline { usleep(20_000) }
                if answers.acknowledgedCount <= before {
                    result.record(Failure("no save succeeded within 30 s of the failover"), round: round)
                } else {
                    recovery = max(recovery, Date().timeIntervalSince(failedOver))
                }
                // A few more saves on the promoted standby, then stop and check.
                let more = answers.acknowledgedCount + 3
                while answers.acknowledgedCount < more && Date() < deadline { usleep(20_000) }
                answers.stop()
                while !writer.isFinished { usleep(10_000) }
                if answers.longestSave > PostgreSQLServerFaults.saveDeadline {
                    result.record(Failure(String(format: "a save took %.1f s, past its deadline of %.0f s", answers.longestSave,
                                                 PostgreSQLServerFaults.saveDeadline)), round: round)
                }
                try PostgreSQLServerFaults.check(url, answers: answers, into: &result)
                tally.add(answers)
            } catch {
                result.record(error, round: round)
            }
            result.rounds += 1
        }
        tally.report(into: &result)
        result.details["longest time from promotion to the next acknowledged save (s)"] = String(format: "%.1f", recovery)
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// The store URL: the primary, the standby as a replica, short limits (a call on the dead
    /// primary's connection ends in seconds).
    static func storeURL(_ primary: URL, standby: String) throws -> URL {
        guard var components = URLComponents(url: primary, resolvingAgainstBaseURL: false) else { throw Failure("bad URL \(primary)") }
        components.queryItems = [URLQueryItem(name: "schema", value: "reliability_failover"), URLQueryItem(name: "replicas", value: standby),
                                 URLQueryItem(name: "statement_timeout", value: "5"), URLQueryItem(name: "connect_timeout", value: "2"),
                                 URLQueryItem(name: "tls", value: "disable")]
        guard let url = components.url else { throw Failure("bad URL \(primary)") }
        return url
    }
}
