import CSQLitePeer
import Foundation

// `Compare [--quick] [--memory | --history | --migration | --scale | --results | --swiftdata | --postgres [--migration]] [--json PATH]`, `Compare --profile SCENARIO [N]` (`--memory`: only the memory scenario): every scenario three ways in one run, medians of
// several runs, printed as a ratio table and written as JSON (Benchmarks/results/latest.json).
let arguments = CommandLine.arguments
// Before any thread starts: the heap figures read the main arena only (MemoryScenario).
peer_use_one_arena()
if let index = arguments.firstIndex(of: "--profile"), index + 1 < arguments.count {
    // One scenario of ours alone, for a profiler.
    let n = index + 2 < arguments.count ? Int(arguments[index + 2]) ?? 10_000 : 10_000
    try ProfileScenario.run(arguments[index + 1], n: n)
    exit(0)
}
if arguments.contains("--migration") && !arguments.contains("--postgres") {
    // Only the migration scenario.
    printTable([try MigrationScenario.run(n: arguments.contains("--quick") ? 10_000 : 100_000)])
    exit(0)
}
if arguments.contains("--history") {
    // Only the Earthquakes scenarios.
    printTable(try HistoryScenario.run(n: arguments.contains("--quick") ? 10_000 : 100_000))
    exit(0)
}
#if PostgreSQL
if let index = arguments.firstIndex(of: "--writer"), index + 4 < arguments.count {
    // A writer process of the writer-scale scenario.
    try WriterScaleScenario.writer(type: arguments[index + 1], url: arguments[index + 2], seconds: Double(arguments[index + 3]) ?? 1,
                                   history: arguments[index + 4] == "history")
    exit(0)
}
if arguments.contains("--postgres") {
    // Only the PostgreSQL store, against postgres-nio by hand (OCD_POSTGRES_URL), then writers
    // in several processes against SQLite, and the remote-change delay.
    // `--postgres --migration`: the schema migration alone (printed, not written to the JSON).
    let quickRun = arguments.contains("--quick")
    if arguments.contains("--migration") {
        guard let base = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"].flatMap(URLComponents.init(string:)) else {
            FileHandle.standardError.write(Data("The PostgreSQL migration scenario needs OCD_POSTGRES_URL.\n".utf8))
            exit(2)
        }
        printTable([try await MigrationScenario.runPostgreSQL(postgresBase: base, n: quickRun ? 10_000 : 100_000)])
        exit(0)
    }
    var results = try await PostgreSQLScenario.run(n: quickRun ? 2_000 : 10_000, runs: 3)
    if let base = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"].flatMap(URLComponents.init(string:)) {
        results += try WriterScaleScenario.run(postgresBase: base, seconds: quickRun ? 2 : 5)
        results.append(try await MigrationScenario.runPostgreSQL(postgresBase: base, n: quickRun ? 10_000 : 100_000))
    }
    printTable(results)
    try writeJSON(results, to: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("results/postgres.json"))
    exit(0)
}
#else
if arguments.contains("--postgres") || arguments.contains("--writer") {
    FileHandle.standardError.write(Data("The PostgreSQL scenarios are built with the PostgreSQL trait: run Benchmarks/compare --postgres (or swift build -c release --package-path Benchmarks --traits PostgreSQL).\n".utf8))
    exit(2)
}
#endif
#if os(Linux)
if arguments.contains("--swiftdata") {
    // Only the SwiftData layer: SwiftData's API against the Core Data API and raw SQLite.
    let results = try await SwiftDataScenario.run(n: arguments.contains("--quick") ? 10_000 : 100_000, runs: arguments.contains("--quick") ? 3 : 5)
    SwiftDataScenario.print(results)
    try writeJSON(results, to: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("results/swiftdata.json"))
    exit(0)
}
#endif
if arguments.contains("--results") {
    // Only the live-results scenario: a controller's update against a re-fetch and a diff.
    printTable(try ResultsScenario.run())
    exit(0)
}
let quick = arguments.contains("--quick")
if arguments.contains("--scale") {
    // Only the core scenarios, at 10,000 and 200,000 rows: how each ratio grows with the work.
    let results = try ScaleScenario.run(small: 10_000, large: quick ? 100_000 : 200_000, runs: 3)
    try writeJSON(results, to: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("results/scale.json"))
    exit(0)
}
let n = quick ? 10_000 : 100_000
// The memory scenario first: a process's resident set does not shrink back after the others.
var results = [try MemoryScenario.run(count: quick ? 100_000 : 1_000_000), try MemoryScenario.perObject(count: 100_000)]
if !arguments.contains("--memory") {
    results = try Scenarios(n: n, runs: quick ? 3 : 5).all() + [try IndexedScenario.run(n: n, runs: quick ? 3 : 5),
        try LatencyScenario.run(count: quick ? 100_000 : 1_000_000)] + (try ResultsScenario.run()) + (try HistoryScenario.run(n: n)) + [try MigrationScenario.run(n: n)] + results
}
printTable(results)
let jsonPath = arguments.firstIndex(of: "--json").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("results/latest.json").path
try writeJSON(results, to: URL(fileURLWithPath: jsonPath))
print("JSON: \(jsonPath)")
