import Foundation
import GRDB
import OpenCoreData
import Synchronization

/// While a background context imports `count` rows in batches of 10,000 (insert + save each),
/// a reader context fetches 100 objects every 10 ms; the reader's fetch latencies are reported
/// (p50 / p99 / max). The peer: GRDB's DatabasePool, a writer inserting the same batches while a
/// reader fetches 100 records every 10 ms. (The reader here is a private-queue context: this
/// executable does not run the main queue. Its fetches take the same path as a view context's.)
enum LatencyScenario {
    static func run(count: Int) throws -> Result {
        let (oursTotal, ours) = try measureOurs(count: count)
        let (grdbTotal, grdb) = try measureGRDB(count: count)
        return Result(scenario: "fetch 100 every 10 ms during an import", n: count, ours: oursTotal, raw: nil, grdb: grdbTotal,
                      extra: ["ours_p50_ms": percentile(ours, 0.5), "ours_p99_ms": percentile(ours, 0.99), "ours_max_ms": ours.max() ?? 0,
                              "grdb_p50_ms": percentile(grdb, 0.5), "grdb_p99_ms": percentile(grdb, 0.99), "grdb_max_ms": grdb.max() ?? 0])
    }

    private static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    private static func measureOurs(count: Int) throws -> (Double, [Double]) {
        let container = PersistentContainer(name: "Latency", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: scratchFile("latency.sqlite"))]
        try container.loadPersistentStores()
        let importer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        let done = Atomic<Bool>(false)
        let latencies = Mutex<[Double]>([])
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                let elapsed = measure {
                    reader.performAndWait {
                        let request = Note.fetchRequest()
                        request.fetchLimit = 100
                        _ = try? reader.fetch(request).map(\.id)
                        reader.reset()
                    }
                }
                latencies.withLock { $0.append(elapsed) }
                Thread.sleep(forTimeInterval: 0.010)
            }
        }
        sampler.start()
        let total = try importer.performAndWait { () throws in
            try measure {
                var next = 0
                while next < count {
                    for index in next..<min(count, next + 10_000) {
                        let note = Note(context: importer)
                        note.id = Int32(index)
                        note.text1 = "imported \(index)"
                    }
                    try importer.save()
                    importer.reset()
                    next += 10_000
                }
            }
        }
        done.store(true, ordering: .relaxed)
        while !sampler.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        return (total, latencies.withLock { $0 })
    }

    private static func measureGRDB(count: Int) throws -> (Double, [Double]) {
        let peer = try GRDBPeer(path: scratchFile("latency-grdb.sqlite").path)
        let done = Atomic<Bool>(false)
        let latencies = Mutex<[Double]>([])
        let pool = peer.pool
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                let elapsed = measure {
                    _ = try? pool.read { db in try RawNote.limit(100).fetchAll(db) }
                }
                latencies.withLock { $0.append(elapsed) }
                Thread.sleep(forTimeInterval: 0.010)
            }
        }
        sampler.start()
        let rows = RawNote.rows(count)
        let total = try measure {
            var next = 0
            while next < count {
                try peer.insert(Array(rows[next..<min(count, next + 10_000)]))
                next += 10_000
            }
        }
        done.store(true, ordering: .relaxed)
        while !sampler.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        return (total, latencies.withLock { $0 })
    }
}
