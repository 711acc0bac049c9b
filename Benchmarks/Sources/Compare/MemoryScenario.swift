import CSQLitePeer
import Foundation
import OpenCoreData

/// Peak resident memory while iterating `count` rows with `fetchBatchSize = 500`.
///
/// The rows are written with the C API (so that writing them does not set the peak), the peak is
/// reset through `/proc/self/clear_refs`, then the rows are iterated.
enum MemoryScenario {
    static func run(count: Int) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-memory-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Memory.sqlite")
        do {
            let container = PersistentContainer(name: "Memory", managedObjectModel: ManagedObjectModel(Note.self))
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()
            let coordinator = container.persistentStoreCoordinator
            try coordinator.remove(coordinator.persistentStores[0])
        }
        fill(url.path, count: count)

        let container = PersistentContainer(name: "Memory", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        resetPeak()
        let before = peakMegabytes()
        let start = DispatchTime.now().uptimeNanoseconds
        var checksum = 0
        try context.performAndWait {
            let request = Note.fetchRequest()
            request.fetchBatchSize = 500
            for note in try context.fetchBatched(request) {
                checksum &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0)
            }
        }
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
        let peak = peakMegabytes()
        precondition(checksum != 0)

        resetPeak()
        let rawStart = DispatchTime.now().uptimeNanoseconds
        let rawSum = RawSQLitePeer(path: url.path).iterate()
        let rawMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - rawStart) / 1_000_000
        let rawPeak = peakMegabytes()
        precondition(rawSum != 0)
        return Result(scenario: "iterate rows, fetchBatchSize 500", n: count, ours: milliseconds, raw: rawMilliseconds, grdb: nil,
                      extra: ["ours_peak_mb": peak, "raw_peak_mb": rawPeak, "baseline_mb": before])
    }

    /// Bytes of heap per object held: `count` notes fetched into an array and kept (ours:
    /// registered managed objects; GRDB: its records; raw: structs filled from the C API), and
    /// the peak resident memory of our fetch. Heap in use is glibc's `mallinfo2().uordblks`.
    static func perObject(count: Int) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-objects-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Objects.sqlite")
        do {
            let container = PersistentContainer(name: "Objects", managedObjectModel: ManagedObjectModel(Note.self))
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()
            let coordinator = container.persistentStoreCoordinator
            try coordinator.remove(coordinator.persistentStores[0])
        }
        fill(url.path, count: count)

        let container = PersistentContainer(name: "Objects", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        // Warm up (statement caches, the model's tables) on a small fetch.
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.fetchLimit = 10
            _ = try context.fetch(request)
            context.reset()
        }
        resetPeak()
        let baselinePeak = peakMegabytes()
        var heap = heapInUse()
        let start = DispatchTime.now().uptimeNanoseconds
        let notes = try context.performAndWait { try context.fetch(Note.fetchRequest()) }
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
        let ours = Double(heapInUse() - heap) / Double(notes.count)
        let peak = peakMegabytes()
        precondition(notes.count == count)

        heap = heapInUse()
        let rawStart = DispatchTime.now().uptimeNanoseconds
        let structs = RawSQLitePeer(path: url.path).fetchAll()
        let rawMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - rawStart) / 1_000_000
        let raw = Double(heapInUse() - heap) / Double(structs.count)

        let grdbPeer = try GRDBPeer(path: url.path)
        heap = heapInUse()
        let grdbStart = DispatchTime.now().uptimeNanoseconds
        let records = try grdbPeer.fetchAll()
        let grdbMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - grdbStart) / 1_000_000
        let grdb = Double(heapInUse() - heap) / Double(records.count)
        precondition(structs.count == count && records.count == count)
        withExtendedLifetime((notes, structs, records, context)) {}
        return Result(scenario: "fetch and hold all notes (memory)", n: count, ours: milliseconds, raw: rawMilliseconds, grdb: grdbMilliseconds,
                      extra: ["ours_bytes_per_object": ours, "raw_bytes_per_object": raw, "grdb_bytes_per_object": grdb,
                              "ours_peak_mb": peak, "baseline_mb": baselinePeak])
    }

    /// Bytes of the heap in use (glibc).
    private static func heapInUse() -> Int { Int(peer_heap_in_use()) }

    private static func fill(_ path: String, count: Int) {
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "BEGIN", nil, nil, nil)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZID, ZTEXT1) VALUES (?, 1, 1, ?, ?)", -1, &statement, nil)
        for index in 1...count {
            sqlite3_bind_int64(statement, 1, Int64(index))
            sqlite3_bind_int64(statement, 2, Int64(index))
            sqlite3_bind_text(statement, 3, "text number \(index)", -1, peer_sqlite_transient())
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        sqlite3_exec(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = \(count) WHERE Z_NAME = 'Note'", nil, nil, nil)
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
    }

    /// Resets the kernel's peak-RSS counter (VmHWM) for this process.
    private static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// VmHWM: the peak resident set size, in MB.
    static func peakMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kilobytes / 1024
    }
}
