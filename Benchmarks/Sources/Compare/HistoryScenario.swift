import CSQLitePeer
import Foundation
import OpenCoreData
import Synchronization

/// An earthquake as the Earthquakes sample stores it (`code` unique).
@Managed
final class BenchQuake: ManagedObject {
    @Attribute(.unique) var code: String = ""
    var magnitude: Double?
    var place: String = ""
    var time: Date = Date(timeIntervalSinceReferenceDate: 0)
    var latitude: Double = 0
    var longitude: Double = 0
    var depth: Double = 0
}

/// The Earthquakes pattern, measured: a batch import of `n` quakes into a store with history
/// tracking (raw SQLite inserting the same rows into the same table and unique index is the
/// peer), merging 500 history transactions in one pass versus one at a time, and the delay of a
/// remote-change notification after another coordinator's save.
enum HistoryScenario {
    static func run(n: Int) throws -> [Result] {
        [try batchImport(n: n), try historyMerge(), try remoteChangeDelay()]
    }

    private static let options: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true]

    private static func container(_ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Quakes", managedObjectModel: ManagedObjectModel(BenchQuake.self))
        let description = PersistentStoreDescription(url: url)
        for (key, value) in options { description.setOption(value, forKey: key) }
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        return container
    }

    private static func batchImport(n: Int) throws -> Result {
        var ours: [Double] = [], raw: [Double] = []
        for _ in 0..<3 {
            let container = try container(scratchFile("quakes.sqlite"))
            ours.append(try measure { try importQuakes(n: n, into: container) })
            raw.append(rawImport(n: n, path: scratchFile("raw-quakes.sqlite").path))
        }
        let oursMS = median(ours), rawMS = median(raw)
        return Result(scenario: "batch import N quakes (history on)", n: n, ours: oursMS, raw: rawMS, grdb: nil,
                      extra: ["ours_rows_per_s": Double(n) / oursMS * 1000, "raw_rows_per_s": Double(n) / rawMS * 1000])
    }

    /// The import itself: one batch insert request whose handler fills each quake.
    static func importQuakes(n: Int, into container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        let entity = container.managedObjectModel.entitiesByName["BenchQuake"]!
        try context.performAndWait { () throws in
            var index = 0
            let request = BatchInsertRequest(entity: entity, managedObjectHandler: { object in
                guard index < n, let quake = object as? BenchQuake else { return true }
                quake.code = "q\(index)"
                quake.magnitude = Double(index % 70) / 10
                quake.place = "place \(index % 1000)"
                quake.time = Date(timeIntervalSinceReferenceDate: Double(index))
                quake.latitude = Double(index % 180) - 90
                quake.longitude = Double(index % 360) - 180
                quake.depth = Double(index % 50)
                index += 1
                return false
            })
            _ = try context.execute(request)
        }
    }

    /// A container for the quakes with history tracking, for the profile's `quake-import`.
    static func profileContainer(_ url: URL) throws -> PersistentContainer { try container(url) }

    static func rawImport(n: Int, path: String) -> Double {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(db) }
        sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", nil, nil, nil)
        sqlite3_exec(db, "CREATE TABLE ZBENCHQUAKE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDEPTH FLOAT, ZLATITUDE FLOAT, ZLONGITUDE FLOAT, ZMAGNITUDE FLOAT, ZTIME TIMESTAMP, ZCODE VARCHAR, ZPLACE VARCHAR)", nil, nil, nil)
        sqlite3_exec(db, "CREATE UNIQUE INDEX Z_BenchQuake_UNIQUE_code ON ZBENCHQUAKE (ZCODE COLLATE BINARY ASC)", nil, nil, nil)
        return measure {
            sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "INSERT INTO ZBENCHQUAKE (Z_PK, Z_ENT, Z_OPT, ZDEPTH, ZLATITUDE, ZLONGITUDE, ZMAGNITUDE, ZTIME, ZCODE, ZPLACE) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?)", -1, &statement, nil)
            for index in 0..<n {
                sqlite3_bind_int64(statement, 1, Int64(index + 1))
                sqlite3_bind_double(statement, 2, Double(index % 50))
                sqlite3_bind_double(statement, 3, Double(index % 180) - 90)
                sqlite3_bind_double(statement, 4, Double(index % 360) - 180)
                sqlite3_bind_double(statement, 5, Double(index % 70) / 10)
                sqlite3_bind_double(statement, 6, Double(index))
                for (position, text) in [(Int32(7), "q\(index)"), (Int32(8), "place \(index % 1000)")] {
                    var text = text
                    text.withUTF8 { buffer in
                        _ = buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(statement, position, $0.baseAddress, Int32($0.count), peer_sqlite_transient()) }
                    }
                }
                sqlite3_step(statement)
                sqlite3_reset(statement)
            }
            sqlite3_finalize(statement)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
        }
    }

    /// 500 transactions, each updating 20 of 1,000 quakes a viewer holds: merged in one pass
    /// (`mergeChanges(fromHistory:)`) and one by one (each transaction's notification).
    private static func historyMerge() throws -> Result {
        let container = try container(scratchFile("merge.sqlite"))
        let writer = container.newBackgroundContext()
        let ids = try writer.performAndWait { () throws in
            let quakes = (0..<1000).map { index -> BenchQuake in
                let quake = BenchQuake(context: writer)
                quake.code = "m\(index)"
                return quake
            }
            try writer.save()
            return quakes.map(\.objectID)
        }
        let start = container.persistentStoreCoordinator.currentPersistentHistoryToken()
        try writer.performAndWait { () throws in
            for round in 0..<500 {
                for offset in 0..<20 { (writer.object(with: ids[(round * 20 + offset * 37) % ids.count]) as? BenchQuake)?.depth = Double(round) }
                try writer.save()
            }
        }
        func viewer() throws -> (ManagedObjectContext, [ManagedObject]) {
            let context = container.newBackgroundContext()
            let held = try context.performAndWait { try context.fetch(BenchQuake.fetchRequest()) as [ManagedObject] }
            return (context, held)
        }
        let (onePass, heldA) = try viewer()
        let transactions = try onePass.performAndWait { () throws in
            try onePass.execute(PersistentHistoryChangeRequest.fetchHistory(after: start)).transactions
        }
        let oneMS = onePass.performAndWait { measure { onePass.mergeChanges(fromHistory: transactions) } }
        let (eachContext, heldB) = try viewer()
        let eachMS = eachContext.performAndWait {
            measure { for transaction in transactions { eachContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) } }
        }
        _ = (heldA, heldB)
        return Result(scenario: "merge 500 history transactions", n: transactions.count, ours: oneMS, raw: nil, grdb: nil,
                      extra: ["one_by_one_ms": eachMS])
    }

    /// Another coordinator on the same file saves; the time until this coordinator posts
    /// `.NSPersistentStoreRemoteChange` (median of 20).
    private static func remoteChangeDelay() throws -> Result {
        let url = scratchFile("remote.sqlite")
        let listener = try container(url)
        let writer = try container(url)
        let delays = try remoteChangeDelays(writer: writer, listener: listener, rounds: 20, pause: 0.05, wait: 0.2) { context, round in
            BenchQuake(context: context).code = "r\(round)"
        }
        let sorted = delays.sorted()
        return Result(scenario: "remote-change notification delay", n: delays.count, ours: sorted.isEmpty ? -1 : median(sorted), raw: nil, grdb: nil,
                      extra: ["max_ms": sorted.last ?? -1])
    }
}

/// Milliseconds from each save by `writer` (returning) until `listener` posts
/// `.NSPersistentStoreRemoteChange` (0 when it came first), over `rounds` saves `pause` s apart;
/// a notification that does not come within `wait` s counts as `wait`.
func remoteChangeDelays(writer: PersistentContainer, listener: PersistentContainer, rounds: Int, pause: Double, wait: Double,
                        insert: (ManagedObjectContext, Int) -> Void) throws -> [Double] {
    let received = Mutex<UInt64?>(nil)
    let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: listener.persistentStoreCoordinator, queue: nil) { _ in
        received.withLock { $0 = $0 ?? DispatchTime.now().uptimeNanoseconds }
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    let context = writer.newBackgroundContext()
    var delays: [Double] = []
    for round in 0..<rounds {
        Thread.sleep(forTimeInterval: pause)
        received.withLock { $0 = nil }
        let saved = try context.performAndWait { () throws -> UInt64 in
            insert(context, round)
            try context.save()
            return DispatchTime.now().uptimeNanoseconds
        }
        let deadline = saved + UInt64(wait * 1_000_000_000)
        while received.withLock({ $0 }) == nil && DispatchTime.now().uptimeNanoseconds < deadline {
            Thread.sleep(forTimeInterval: 0.0005)
        }
        let at = received.withLock { $0 } ?? deadline
        delays.append(max(0, Double(Int64(at) - Int64(saved)) / 1_000_000))
    }
    return delays
}
