import Foundation

/// Whether costs grow with the work: the core scenarios at two sizes in one run, each ours ÷ raw
/// ratio at the large size against the same ratio at the small one. A ratio that grows means a
/// cost of ours that grows faster than SQLite's (the goal: within 20 %).
enum ScaleScenario {
    static func run(small: Int, large: Int, runs: Int) throws -> [Result] {
        let smallResults = try Scenarios(n: small, runs: runs).all()
        let largeResults = try Scenarios(n: large, runs: runs).all()
        func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        print("scenario".padding(toLength: 44, withPad: " ", startingAt: 0)
              + right("÷raw @\(small / 1000)k", 12) + right("÷raw @\(large / 1000)k", 12) + right("growth", 9))
        var results: [Result] = []
        for large in largeResults {
            guard let small = smallResults.first(where: { $0.scenario == large.scenario }),
                  let smallRaw = small.raw, let largeRaw = large.raw else { continue }
            let (before, after) = (small.ours / smallRaw, large.ours / largeRaw)
            let growth = (after / before - 1) * 100
            print(large.scenario.padding(toLength: 44, withPad: " ", startingAt: 0)
                  + String(format: "%11.2f×%11.2f×%+8.0f%%", before, after, growth))
            var result = large
            result.extra = ["ratio_small": before, "ratio_large": after, "growth_percent": growth, "n_small": Double(small.n)]
            results.append(result)
        }
        return results
    }
}
