import Foundation

/// One scenario's figures: medians in milliseconds; `nil` where a peer has no such operation.
struct Result {
    var scenario: String
    var n: Int
    var ours: Double
    var raw: Double?
    var grdb: Double?
    var extra: [String: Double] = [:]

    var json: [String: Any] {
        var object: [String: Any] = ["scenario": scenario, "n": n, "ours_ms": ours, "raw_ms": raw ?? NSNull(), "grdb_ms": grdb ?? NSNull()]
        for (key, value) in extra { object[key] = value }
        return object
    }
}

/// Milliseconds taken by `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// A fresh file in a fresh folder under the temporary directory.
func scratchFile(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-\(UUID().uuidString)").appendingPathComponent(name)
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    return url
}

/// Prints the ratio table.
func printTable(_ results: [Result]) {
    func cell(_ value: Double?) -> String { value.map { String(format: "%10.2f", $0) } ?? String(repeating: " ", count: 8) + "—" + " " }
    func ratio(_ a: Double, _ b: Double?) -> String { b.map { String(format: "%9.2f×", a / $0) } ?? String(repeating: " ", count: 9) + "—" }
    print("scenario".padding(toLength: 44, withPad: " ", startingAt: 0) + "       n   ours ms    raw ms   grdb ms  ours÷raw ours÷grdb")
    for r in results {
        var line = r.scenario.padding(toLength: 44, withPad: " ", startingAt: 0)
        line += String(format: "%8d", r.n) + cell(r.ours) + cell(r.raw) + cell(r.grdb) + ratio(r.ours, r.raw) + ratio(r.ours, r.grdb)
        for (key, value) in r.extra.sorted(by: { $0.key < $1.key }) { line += "  \(key)=\(String(format: "%.1f", value))" }
        print(line)
    }
}

func writeJSON(_ results: [Result], to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let data = try JSONSerialization.data(withJSONObject: results.map(\.json), options: [.prettyPrinted, .sortedKeys])
    try data.write(to: url)
}
