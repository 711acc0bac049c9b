enum KillDuringMigration {
    static func migrate(store: String) throws {}
    static func write(store: String, ledger: String, first: Int64) throws {}
    static func run(roundsPerPhase: Int, directory: URL, seed: UInt64) -> [ScenarioResult] { [] }
}
enum ManyProcesses {
    static func work(store: String, worker: Int, seconds: Double, ledger: String) throws {}
    static func create(store: String) throws {}
    static func runCreate(rounds: Int, directory: URL) -> ScenarioResult { ScenarioResult(scenario: "x", rounds: 0) }
    static func run(processes: Int, seconds: Double, directory: URL) -> ScenarioResult { ScenarioResult(scenario: "x", rounds: 0) }
}
enum Soak {
    static func work(store: String, seconds: Double) throws {}
    static func run(seconds: Double, directory: URL) -> ScenarioResult { ScenarioResult(scenario: "x", rounds: 0) }
}
import Foundation
