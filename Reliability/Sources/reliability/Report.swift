import Foundation

/// One row of the table and of `latest.json`.
struct ScenarioResult {
    var scenario: String
    var rounds: Int
    var failures = 0
    /// Acknowledged work missing afterwards.
    var lost = 0
    /// A store that fails its integrity check or holds part of a transaction.
    var torn = 0
    var seconds: Double = 0
    var operations = 0
    var messages: [String] = []
    var details: [String: String] = [:]

    mutating func record(_ error: any Error, round: Int) {
        failures += 1
        if messages.count < 10 { messages.append("round \(round): \(error)") }
    }

    /// Classifies a failure the checker described.
    mutating func noteTornOrLost(_ error: any Error) {
        let text = String(describing: error)
        if text.contains("integrity") || text.contains("torn") || text.contains("point at") { torn += 1 }
        else if text.contains("expected") || text.contains("gone") || text.contains("missing") { lost += 1 }
    }

    var json: [String: Any] {
        ["scenario": scenario, "rounds": rounds, "failures": failures, "lost": lost, "torn": torn,
         "seconds": (seconds * 10).rounded() / 10, "details": details, "messages": messages]
    }
}

enum Report {
    static func print(_ results: [ScenarioResult]) {
        let header = ["scenario", "rounds", "failures", "lost", "torn", "seconds"]
        let rows = results.map { [$0.scenario, String($0.rounds), String($0.failures), String($0.lost), String($0.torn), String(format: "%.1f", $0.seconds)] }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: " | ") + " |"
        }
        Swift.print(line(header))
        Swift.print("|" + widths.enumerated().map { $0.offset == 0 ? String(repeating: "-", count: $0.element + 2) : String(repeating: "-", count: $0.element + 1) + ":" }.joined(separator: "|") + "|")
        for row in rows { Swift.print(line(row)) }
        for result in results {
            for (key, value) in result.details.sorted(by: { $0.key < $1.key }) { Swift.print("  \(result.scenario): \(key): \(value)") }
            for message in result.messages { Swift.print("  \(result.scenario): FAILED \(message)") }
        }
    }

    static func write(_ results: [ScenarioResult], mode: String, to path: String) throws {
        let document: [String: Any] = [
            "mode": mode,
            "date": ISO8601DateFormatter().string(from: Date()),
            "scenarios": results.map(\.json),
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }
}
