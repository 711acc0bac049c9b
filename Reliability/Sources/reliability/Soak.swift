import Foundation
import OpenCoreData

/// A server runs for weeks: one process runs a steady workload (inserts, updates, deletes,
/// fetches, batch requests, history read and trimmed) on a store whose size stays level, and
/// its resident memory must level off too. Memory is sampled each second; the growth from the
/// first quarter of the run to its end must stay under 16 MB and 25 %.
enum Soak {
    static func work(store: String, seconds: Double) throws {
        let container = PersistentContainer(name: "Reliability", managedObjectModel: Workload.model())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: store))
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let view = container.viewContext
        try context.performAndWait { () throws in try Workload.perform(.setup, number: 0, in: context) }
        let started = Date()
        var samples: [(Double, Double)] = []
        var lastSample = 0.0
        var number: Int64 = 1
        var token: PersistentHistoryToken?
        while Date().timeIntervalSince(started) < seconds {
            // Keep the store level: insert a batch, change one, delete the oldest.
            let batch = number
            try context.performAndWait { () throws in
                try Workload.perform(.insert(batch: batch, count: 50, account: batch % 3 + 1), number: batch, in: context)
                try Workload.perform(.update(batch: batch, amount: batch), number: batch, in: context)
                if batch > 20 { try Workload.perform(.delete(batch: batch - 20), number: batch, in: context) }
                if batch % 10 == 0 {
                    try Workload.perform(.batchInsert(batch: -batch, count: 50), number: batch, in: context)
                    try Workload.perform(.batchUpdate(batch: -batch, amount: 1), number: batch, in: context)
                    try Workload.perform(.batchDelete(batch: -batch), number: batch, in: context)
                }
            }
            // A long-lived context follows through history, which is trimmed behind it.
            try view.performAndWait { () throws in
                let transactions = try view.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
                view.mergeChanges(fromHistory: transactions)
                token = transactions.last?.token ?? token
                let request = FetchRequest<ManagedObject>(entityName: "Entry")
                request.predicate = FetchPredicate(format: "batch > %lld", batch - 5)
                _ = try view.fetch(request).map { $0.value(forKey: "amount") }
                if let token { _ = try view.execute(PersistentHistoryChangeRequest.deleteHistory(before: token)) }
            }
            number += 1
            let now = Date().timeIntervalSince(started)
            if now - lastSample >= 1 {
                samples.append((now, residentMegabytes()))
                lastSample = now
            }
        }
        let quarter = samples.first { $0.0 >= seconds / 4 }?.1 ?? samples.first?.1 ?? 0
        say("rss \(quarter) \(samples.last?.1 ?? 0) operations \(number - 1)")
    }

    static func run(seconds: Double, directory: URL) -> ScenarioResult {
        var result = ScenarioResult(scenario: "steady workload, \(Int(seconds)) s: memory levels off", rounds: 1)
        let started = Date()
        let store = directory.appendingPathComponent("soak.sqlite").path
        do {
            let output = Pipe()
            let child = try Child.start(["work-soak", store, String(seconds)], output: output.fileHandleForWriting)
            child.waitUntilExit()
            try? output.fileHandleForWriting.close()
            let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
            guard child.terminationStatus == 0, report.count >= 5, let early = Double(report[1]), let late = Double(report[2]) else {
                throw Failure("the workload failed (exit \(child.terminationStatus))")
            }
            result.details["resident memory after a quarter / at the end (MB)"] = String(format: "%.1f / %.1f", early, late)
            result.details["rounds of the workload"] = String(report[4])
            if late - early > max(16, early * 0.25) { throw Failure(String(format: "memory grew from %.1f MB to %.1f MB under a steady workload", early, late)) }
        } catch {
            result.record(error, round: 0)
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }
}
