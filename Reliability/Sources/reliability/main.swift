import Foundation

// reliability run [--quick] [--only NAME] [--results PATH]   the harness (see Reliability/run)
// reliability work-… ARGS                                     a child process of a scenario

let arguments = Array(CommandLine.arguments.dropFirst())

/// The value after the last `flag` (Reliability/run passes its default `--results` first, so one
/// given by the caller wins).
func value(after flag: String) -> String? {
    arguments.lastIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}

do {
    switch arguments.first {
    case "work-saves":
        try KillDuringSaves.work(store: arguments[1], ledger: arguments[2], seed: UInt64(arguments[3])!, first: Int64(arguments[4])!, limit: Int64(arguments[5])!)
    case "work-migrate":
        try KillDuringMigration.migrate(store: arguments[1], stay: arguments[2] == "stay")
    case "work-writer":
        try KillDuringMigration.write(store: arguments[1], ledger: arguments[2], first: Int64(arguments[3])!)
    case "work-counter":
        try ManyProcesses.work(store: arguments[1], worker: Int(arguments[2])!, seconds: Double(arguments[3])!, ledger: arguments[4])
    case "work-create":
        try ManyProcesses.create(store: arguments[1])
    case "work-faults":
        try IOFaults.work(directory: arguments[1], operation: arguments[2])
    case "work-store-operation":
        try KillDuringStoreOperations.work(operation: arguments[1], directory: arguments[2])
    case "work-pg-migrate":
        try PostgreSQLMigrationKills.migrate(url: arguments[1])
    case "work-pg-writer":
        try PostgreSQLMigrationKills.write(url: arguments[1], ledger: arguments[2])
    case "work-pg-create":
        try PostgreSQLManyProcesses.create(url: arguments[1])
    case "work-soak":
        try Soak.work(store: arguments[1], seconds: Double(arguments[2])!)
    case "run":
        let quick = arguments.contains("--quick")
        let only = value(after: "--only")
        let seed = value(after: "--seed").flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-reliability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        print("seed \(seed)\(quick ? ", quick" : ""); stores in \(directory.path)")
        var results: [ScenarioResult] = []
        func wanted(_ name: String) -> Bool { only == nil || only == name }
        if wanted("saves") { results.append(KillDuringSaves.run(rounds: quick ? 60 : 1_000, directory: directory, seed: seed)) }
        if wanted("migration") { results += KillDuringMigration.run(roundsPerPhase: quick ? 6 : 200, directory: directory, seed: seed) }
        if wanted("operations") { results += KillDuringStoreOperations.run(rounds: quick ? 6 : 100, directory: directory, seed: seed) }
        if wanted("faults") { results += IOFaults.run(directory: directory) }
        if wanted("processes") {
            results.append(ManyProcesses.runCreate(rounds: quick ? 5 : 50, directory: directory))
            results.append(ManyProcesses.run(processes: 8, seconds: quick ? 8 : 60, directory: directory))
        }
        if wanted("soak") { results.append(Soak.run(seconds: quick ? 20 : 120, directory: directory)) }
        // With --postgres (Reliability/run starts a cluster of its own and names it here).
        if let url = value(after: "--postgres-url").flatMap(URL.init(string:)), let cluster = value(after: "--postgres-dir"),
           let script = value(after: "--postgres-script"), wanted("postgres") {
            let server = PostgreSQLServerFaults.Cluster(url: url, directory: cluster, script: script)
            for fault in PostgreSQLServerFaults.Fault.allCases {
                // A black-holed or unanswered COMMIT, or a lock held, costs its save ~10 s: fewer rounds.
                let rounds = switch fault {
                case .blackHole, .partition, .lostAnswer, .lockHeld: quick ? 2 : 10
                case .lockTimeout: quick ? 3 : 20
                default: quick ? 5 : 50
                }
                results.append(PostgreSQLServerFaults.run(fault, rounds: rounds, cluster: server, seed: seed))
            }
            results.append(PostgreSQLMigrationKills.run(rounds: quick ? 5 : 50, cluster: server, directory: directory, seed: seed))
            results.append(PostgreSQLManyProcesses.runCreate(rounds: quick ? 3 : 30, cluster: server, seed: seed))
            results.append(PostgreSQLPoolExhaustion.run(rounds: quick ? 2 : 10, cluster: server, seed: seed))
            results.append(PostgreSQLStoppedClient.run(rounds: quick ? 3 : 20, cluster: server, seed: seed))
            results.append(PostgreSQLTLSDowngrade.run(rounds: quick ? 3 : 20, cluster: server))
            results.append(PostgreSQLFailover.run(rounds: quick ? 2 : 10, script: script, seed: seed))
        }
        guard !results.isEmpty else {
            // An empty table would replace the results file's rows with nothing.
            let hint = only == "postgres" ? ": the PostgreSQL scenarios need Reliability/run --postgres (it starts their cluster)" : ""
            FileHandle.standardError.write(Data("reliability run: no scenario ran (--only \(only ?? "")); nothing written\(hint)\n".utf8))
            exit(2)
        }
        Report.print(results)
        if let path = value(after: "--results") {
            try Report.write(results, mode: quick ? "quick" : "full", to: path)
            print("wrote \(path)")
        }
        try? FileManager.default.removeItem(at: directory)
        exit(results.allSatisfy { $0.failures == 0 } ? 0 : 1)
    default:
        print("usage: reliability run [--quick] [--only saves|migration|operations|faults|processes|soak|postgres] [--seed N] [--results PATH] [--postgres-url URL --postgres-dir DIR --postgres-script PATH]")
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("reliability \(arguments.first ?? ""): \(error)\n".utf8))
    exit(1)
}
