import Benchmark
import Foundation
import OpenCoreData

// package-benchmark's suite: OpenCoreData's everyday operations on 10,000 notes, measured for
// time, allocations and peak memory. Compare runs with
// `swift package --package-path Benchmarks benchmark baseline update|compare`.

@Managed
final class BenchNote: ManagedObject {
    var id: Int32 = 0
    var text1: String?
    var text2: String?
}

private let count = 10_000

/// A fresh container on a scratch file.
private func makeContainer() throws -> PersistentContainer {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pb-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let container = PersistentContainer(name: "Bench", managedObjectModel: ManagedObjectModel(BenchNote.self))
    container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.appendingPathComponent("Bench.sqlite"))]
    try container.loadPersistentStores()
    return container
}

/// A container holding `count` saved notes, and their IDs.
private func seeded() throws -> (PersistentContainer, [ManagedObjectID]) {
    let container = try makeContainer()
    let context = container.newBackgroundContext()
    let ids = try context.performAndWait { () throws in
        let notes = (0..<count).map { index -> BenchNote in
            let note = BenchNote(context: context)
            note.id = Int32(index)
            note.text1 = "note \(index)"
            return note
        }
        try context.save()
        return notes.map(\.objectID)
    }
    return (container, ids)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident], maxDuration: .seconds(5), maxIterations: 20)

    Benchmark("insert 10,000 notes + save") { benchmark in
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        benchmark.startMeasurement()
        try context.performAndWait { () throws in
            for index in 0..<count {
                let note = BenchNote(context: context)
                note.id = Int32(index)
                note.text1 = "note \(index)"
            }
            try context.save()
        }
        benchmark.stopMeasurement()
    }

    Benchmark("fetch 10,000 notes, read every attribute") { benchmark in
        let (container, _) = try seeded()
        let context = container.newBackgroundContext()
        benchmark.startMeasurement()
        try context.performAndWait { () throws in
            var total = 0
            for note in try context.fetch(BenchNote.fetchRequest()) { total &+= Int(note.id) + (note.text1?.count ?? 0) + (note.text2?.count ?? 0) }
            blackHole(total)
        }
        benchmark.stopMeasurement()
    }

    Benchmark("1,000 lookups by object ID") { benchmark in
        let (container, ids) = try seeded()
        let context = container.newBackgroundContext()
        benchmark.startMeasurement()
        try context.performAndWait { () throws in
            for id in ids.prefix(1000) { blackHole((try context.existingObject(with: id) as? BenchNote)?.id) }
        }
        benchmark.stopMeasurement()
    }

    Benchmark("update 10,000 notes + save") { benchmark in
        let (container, _) = try seeded()
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let notes = try context.fetch(BenchNote.fetchRequest())
            benchmark.startMeasurement()
            for note in notes { note.text2 = "changed" }
            try context.save()
            benchmark.stopMeasurement()
        }
    }

    Benchmark("batch insert 10,000 rows") { benchmark in
        let container = try makeContainer()
        let context = container.newBackgroundContext()
        let rows: [[String: Any]] = (0..<count).map { ["id": Int32($0), "text1": "note \($0)"] }
        benchmark.startMeasurement()
        try context.performAndWait { () throws in _ = try context.execute(BatchInsertRequest(entityName: "BenchNote", objects: rows)) }
        benchmark.stopMeasurement()
    }
}
