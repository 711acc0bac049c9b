// Built with the PostgreSQL trait only (Benchmarks/Package.swift).
#if PostgreSQL
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Saves per second with 1, 4 and 8 writer processes on one store — a PostgreSQL schema against
/// an SQLite file — each process saving one new object at a time (insert + save) for a fixed
/// time, with persistent history and without (history numbers are taken in commit order, which
/// serialises the end of every save); and the delay until another coordinator of the PostgreSQL store posts
/// `.NSPersistentStoreRemoteChange` for a save (p50 / p99 of 200).
enum WriterScaleScenario {
    static func options(history: Bool) -> [String: any Sendable] { [NSPersistentHistoryTrackingKey: history as NSNumber] }

    static func run(postgresBase: URLComponents, seconds: Double) throws -> [Result] {
        var results: [Result] = []
        for (kind, type) in [("PostgreSQL", PersistentStore.StoreType.postgreSQL), ("SQLite", .sqlite)] {
          for history in [true, false] {
            var rates: [Int: Double] = [:]
            for writers in [1, 4, 8] {
                let url: URL
                var schema: String?
                if type == .postgreSQL {
                    var components = postgresBase
                    schema = "ocd_bench_w_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                    components.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "tls", value: "disable")]   // plaintext, as earlier figures
                    url = components.url!
                } else {
                    url = scratchFile("writers.sqlite")
                }
                // The store exists before the writers start (none of them pays for creating it).
                let setup = try container(url, type: type, history: history)
                rates[writers] = try Double(spawnWriters(writers, url: url, type: type, history: history, seconds: seconds)) / seconds
                for store in setup.persistentStoreCoordinator.persistentStores { try setup.persistentStoreCoordinator.remove(store) }
                if let schema { dropSchema(schema, base: postgresBase) }
            }
            let one = rates[1] ?? 1
            results.append(Result(scenario: "\(kind): saves/s by 8 writers\(history ? ", history" : "")", n: 8, ours: rates[8] ?? 0, raw: nil, grdb: nil,
                                  extra: ["saves_per_s_1": one, "saves_per_s_4": rates[4] ?? 0, "saves_per_s_8": rates[8] ?? 0,
                                          "scaling_4": (rates[4] ?? 0) / one, "scaling_8": (rates[8] ?? 0) / one]))
          }
        }
        results.append(try remoteChangeDelay(base: postgresBase))
        return results
    }

    static func container(_ url: URL, type: PersistentStore.StoreType, history: Bool = true) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Writers", managedObjectModel: ManagedObjectModel(Note.self))
        let description = PersistentStoreDescription(url: url, type: type)
        for (key, value) in options(history: history) { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    /// Starts `count` copies of this executable as writers (`--writer TYPE URL SECONDS`) and
    /// returns the saves they made in all.
    private static func spawnWriters(_ count: Int, url: URL, type: PersistentStore.StoreType, history: Bool, seconds: Double) throws -> Int {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0])
        var processes: [(Process, Pipe)] = []
        for _ in 0..<count {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["--writer", type.rawValue, url.absoluteString, String(seconds), history ? "history" : "no-history"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            processes.append((process, pipe))
        }
        var total = 0
        for (process, pipe) in processes {
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0, let saves = Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw CoreDataError(.persistentStoreOperation, "A writer process failed (status \(process.terminationStatus)): \(String(decoding: output, as: UTF8.self))")
            }
            total += saves
        }
        return total
    }

    /// A writer process: saves one new note at a time until `seconds` pass; prints how many.
    static func writer(type: String, url: String, seconds: Double, history: Bool) throws {
        guard let storeURL = URL(string: url) else { throw CoreDataError(.persistentStoreOpen, "--writer needs a store URL, not \(url).") }
        let container = try container(storeURL, type: type == PersistentStore.StoreType.sqlite.rawValue ? .sqlite : .postgreSQL, history: history)
        let context = container.newBackgroundContext()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1_000_000_000)
        var saves = 0
        try context.performAndWait { () throws in
            while DispatchTime.now().uptimeNanoseconds < deadline {
                let note = Note(context: context)
                note.id = Int32(saves)
                note.text1 = "written by \(ProcessInfo.processInfo.processIdentifier)"
                try context.save()
                context.reset()
                saves += 1
            }
        }
        print(saves)
    }

    /// Two coordinators on one PostgreSQL schema: one saves, the time until the other posts
    /// `.NSPersistentStoreRemoteChange` (the notification crosses the server as it would between
    /// machines: `NOTIFY` on commit, a listening connection of the other coordinator).
    private static func remoteChangeDelay(base: URLComponents) throws -> Result {
        var components = base
        let schema = "ocd_bench_r_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        components.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "tls", value: "disable")]   // plaintext, as earlier figures
        let url = components.url!
        let writer = try container(url, type: .postgreSQL)
        let listener = PersistentContainer(name: "Listener", managedObjectModel: ManagedObjectModel(Note.self))
        let description = PersistentStoreDescription(url: url, type: .postgreSQL)
        for (key, value) in options(history: true) { description.setOption(value, forKey: key) }
        description.setOption(true as NSNumber, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        listener.persistentStoreDescriptions = [description]
        try listener.loadPersistentStores()
        let delays = try remoteChangeDelays(writer: writer, listener: listener, rounds: 200, pause: 0.01, wait: 0.5) { context, round in
            Note(context: context).id = Int32(round)
        }
        for container in [writer, listener] {
            for store in container.persistentStoreCoordinator.persistentStores { try container.persistentStoreCoordinator.remove(store) }
        }
        dropSchema(schema, base: base)
        let sorted = delays.sorted()
        return Result(scenario: "PostgreSQL: remote-change notification delay", n: sorted.count, ours: sorted[sorted.count / 2], raw: nil, grdb: nil,
                      extra: ["p50_ms": sorted[sorted.count / 2], "p99_ms": sorted[min(sorted.count - 1, sorted.count * 99 / 100)], "max_ms": sorted.last ?? 0])
    }

    private static func dropSchema(_ schema: String, base: URLComponents) {
        let semaphore = DispatchSemaphore(value: 0)
        let box = base
        Task {
            try? await PostgreSQLScenario.dropSchema(schema, components: box)
            semaphore.signal()
        }
        semaphore.wait()
    }
}
#endif
