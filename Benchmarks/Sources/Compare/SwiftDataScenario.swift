#if os(Linux)
import Foundation
import SwiftData

/// A note as SwiftData code declares it (the same columns as `Note`).
@Model
final class SwiftDataNote {
    var id: Int32
    var text1: String?
    var text2: String?
    var text3: String?

    init(id: Int32, text1: String?, text2: String?, text3: String?) {
        self.id = id
        self.text1 = text1
        self.text2 = text2
        self.text3 = text3
    }
}

/// Inserts, fetches and updates on the model actor's own queue, as server code does its work.
@ModelActor
actor SwiftDataNoteActor {
    func insertAndSave(_ rows: [RawNote]) throws -> Double {
        try measure {
            for row in rows { modelContext.insert(SwiftDataNote(id: row.id, text1: row.text1, text2: row.text2, text3: row.text3)) }
            try modelContext.save()
        }
    }

    func fetchAndReadAll(expecting n: Int) throws -> Double {
        try measure {
            var checksum = 0
            let notes = try modelContext.fetch(FetchDescriptor<SwiftDataNote>())
            for note in notes {
                checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) &+ (note.text3?.utf8.count ?? 0)
            }
            precondition(notes.count == n && checksum != 0)
        }
    }

    func updateAllAndSave() throws -> Double {
        let notes = try modelContext.fetch(FetchDescriptor<SwiftDataNote>())
        return try measure {
            for note in notes { note.text2 = "updated" }
            try modelContext.save()
        }
    }
}

/// The SwiftData layer's cost (`Compare --swiftdata`): the same work through SwiftData's API (a
/// model actor, and a `ModelContext` used from another thread, whose every call waits for the
/// context's queue), through the Core Data API, and with raw SQLite, in one run.
enum SwiftDataScenario {
    static func run(n: Int, runs: Int) async throws -> [Result] {
        let rows = RawNote.rows(n)
        var samples: [String: [Double]] = [:]
        for _ in 0..<runs {
            let raw = RawSQLitePeer(path: scratchFile("raw.sqlite").path)
            samples["raw insert", default: []].append(measure { raw.insert(rows) })
            samples["raw fetch", default: []].append(measure { precondition(raw.fetchAll().count == n) })
            samples["raw update", default: []].append(measure { raw.update(rows.map(\.pk), text: "updated") })

            let coreData = try CoreDataAPITimings.run(rows)
            samples["core data insert", default: []].append(coreData.insert)
            samples["core data fetch", default: []].append(coreData.fetch)
            samples["core data update", default: []].append(coreData.update)

            let container = try ModelContainer(for: SwiftDataNote.self, configurations: ModelConfiguration(url: scratchFile("swiftdata.store")))
            let actor = SwiftDataNoteActor(modelContainer: container)
            samples["actor insert", default: []].append(try await actor.insertAndSave(rows))
            samples["actor fetch", default: []].append(try await actor.fetchAndReadAll(expecting: n))
            samples["actor update", default: []].append(try await actor.updateAllAndSave())

            let threadContainer = try ModelContainer(for: SwiftDataNote.self, configurations: ModelConfiguration(url: scratchFile("swiftdata.store")))
            let context = ModelContext(threadContainer)
            samples["thread insert", default: []].append(try measure {
                for row in rows { context.insert(SwiftDataNote(id: row.id, text1: row.text1, text2: row.text2, text3: row.text3)) }
                try context.save()
            })
            samples["thread fetch", default: []].append(try measure {
                var checksum = 0
                for note in try ModelContext(threadContainer).fetch(FetchDescriptor<SwiftDataNote>()) {
                    checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) &+ (note.text3?.utf8.count ?? 0)
                }
                precondition(checksum != 0)
            })
        }
        func result(_ name: String, _ kind: String) -> Result {
            var result = Result(scenario: "SwiftData API: \(name)", n: n, ours: median(samples["actor \(kind)"] ?? [0]),
                                raw: median(samples["raw \(kind)"] ?? [0]), grdb: nil)
            result.extra["core_data_api_ms"] = median(samples["core data \(kind)"] ?? [0])
            if let thread = samples["thread \(kind)"] { result.extra["context_on_another_thread_ms"] = median(thread) }
            return result
        }
        return [result("insert N models + save", "insert"), result("fetch N models, read every property", "fetch"),
                result("update one property of N + save", "update")]
    }

    /// The figures, with the Core Data API's beside SwiftData's.
    static func print(_ results: [Result]) {
        Swift.print("scenario                                              SwiftData  Core Data API   raw SQLite   SD÷CD  SD÷raw  other thread")
        for result in results {
            let coreData = result.extra["core_data_api_ms"] ?? 0
            let thread = result.extra["context_on_another_thread_ms"].map { String(format: "%9.2f ms", $0) } ?? "—"
            let name = result.scenario.padding(toLength: 52, withPad: " ", startingAt: 0)
            Swift.print(name + String(format: " %9.2f  %13.2f  %11.2f  %5.2f×  %5.2f×  ", result.ours, coreData,
                                      result.raw ?? 0, result.ours / coreData, result.ours / (result.raw ?? 1)) + thread)
        }
    }
}
#endif
