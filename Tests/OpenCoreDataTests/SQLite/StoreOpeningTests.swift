import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Opening an SQLite store: several coordinators creating one new file, a history store opened
/// without history, the durability and timeout settings, and what `remove` leaves open.
@Suite(.dedicatedThread) struct StoreOpeningTests {
    private static let model = ManagedObjectModel(Note.self, Sample.self)

    @Test func coordinatorsCreatingTheSameNewStoreAtOnceAgreeOnOneUUID() throws {
        for round in 0..<5 {
            let directory = TemporaryDirectory()
            let url = directory.file("Shared-\(round).sqlite")
            let opened = Locked<[Result<(PersistentContainer, String), any Error>]>([])
            // Threads of their own (not a pool the size of the machine), released together.
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for _ in 0..<6 {
                done.enter()
                Thread {
                    start.waitOrRecord()
                    let result = Result { () throws -> (PersistentContainer, String) in
                        let container = try PersistentContainer.loaded(at: url, model: Self.model)
                        return (container, container.persistentStoreCoordinator.persistentStores[0].identifier)
                    }
                    opened.withLock { $0.append(result) }
                    done.leave()
                }.start()
            }
            for _ in 0..<6 { start.signal() }
            done.waitOrRecord()
            let identifiers = try opened.withLock { try $0.map { try $0.get().1 } }
            #expect(identifiers.count == 6)
            #expect(Set(identifiers).count == 1, "every coordinator names the store by the UUID the file holds")
            let stored = try RawSQLite(url).rows("SELECT Z_UUID FROM Z_METADATA").map { $0[0] as? String }
            #expect(stored == [identifiers[0]])
        }
    }

    @Test func aNewStoreHasTheIncrementalAutoVacuumItsMetadataClaims() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Vacuum.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: Self.model)
        let metadata = container.persistentStoreCoordinator.persistentStores[0].metadata
        #expect(metadata["_NSAutoVacuumLevel"] as? String == "2")
        #expect(try RawSQLite(url).rows("PRAGMA auto_vacuum").first?.first as? Int64 == 2)
        #expect(try RawSQLite(url).rows("PRAGMA journal_mode").first?.first as? String == "wal")
    }

    @Test func aHistoryStoreOpenedWithoutHistoryTrackingIsReadOnly() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("History.sqlite")
        let tracked = try PersistentContainer.loaded(at: url, model: Self.model) { $0.setOption(true, forKey: NSPersistentHistoryTrackingKey) }
        try tracked.viewContext.performAndWait { () throws in
            Note(context: tracked.viewContext).text1 = "tracked"
            try tracked.viewContext.save()
        }
        try tracked.persistentStoreCoordinator.remove(tracked.persistentStoreCoordinator.persistentStores[0])

        // Without the key: it reads, and refuses writes (they would be changes no history records).
        let untracked = try PersistentContainer.loaded(at: url, model: Self.model)
        #expect(untracked.persistentStoreCoordinator.persistentStores[0].isReadOnly)
        let context = untracked.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.fetch(Note.fetchRequest()).map(\.text1) == ["tracked"])
            Note(context: context).text1 = "untracked"
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.message.contains("NSPersistentHistoryTrackingKey"))
            #expect(context.hasChanges, "the context keeps what it could not save")
        }
        #expect(try RawSQLite(url).rows("SELECT ZTEXT1 FROM ZNOTE").map { $0[0] as? String } == ["tracked"])
        try untracked.persistentStoreCoordinator.remove(untracked.persistentStoreCoordinator.persistentStores[0])

        // With the key again, it is writable and history goes on.
        let again = try PersistentContainer.loaded(at: url, model: Self.model) { $0.setOption(true, forKey: NSPersistentHistoryTrackingKey) }
        #expect(!again.persistentStoreCoordinator.persistentStores[0].isReadOnly)
        try again.viewContext.performAndWait { () throws in
            Note(context: again.viewContext).text1 = "tracked again"
            try again.viewContext.save()
        }
        #expect(try RawSQLite(url).rows("SELECT COUNT(*) FROM ATRANSACTION").first?.first as? Int64 == 2)
    }

    @Test func aStoreThatNeverRecordedHistoryStaysWritableWithoutTheKey() throws {
        let directory = TemporaryDirectory()
        let stack = try TestStack(.sqlite, directory: directory)
        #expect(!stack.container.persistentStoreCoordinator.persistentStores[0].isReadOnly)
    }

    /// After a large import the WAL file shrinks back to 16 MiB (`journal_size_limit`) once
    /// SQLite starts it over; without a limit it kept the import's size for good.
    @Test func theWALFileShrinksAfterALargeImport() throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        let wal = URL(fileURLWithPath: stack.storeURL.path + "-wal")
        func walSize() throws -> Int { try FileManager.default.attributesOfItem(atPath: wal.path)[.size] as? Int ?? 0 }
        try context.performAndWait { () throws in
            for index in 0..<32 {
                let sample = Sample(context: context)
                sample.code = "big\(index)"
                sample.payload = Data(repeating: UInt8(index), count: 1 << 20)
            }
            try context.save()
        }
        #expect(try walSize() > 32 << 20)
        // The next writes start the WAL over (the import was checkpointed) and truncate it.
        for index in 0..<3 {
            try context.performAndWait { () throws in
                Sample(context: context).code = "small\(index)"
                try context.save()
            }
        }
        #expect(try walSize() <= 16 << 20)
    }

    @Test func pragmasAndTheTimeoutReachTheConnections() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Pragmas.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: Self.model) { description in
            description.setOption(["synchronous": "FULL", "user_version": 7] as [String: any Sendable], forKey: NSSQLitePragmasOption)
            description.setValue("-4000", forPragmaNamed: "cache_size")
            description.timeout = 2.5
            #expect(description.sqlitePragmas.count == 3)
        }
        try container.viewContext.performAndWait { () throws in
            Note(context: container.viewContext).text1 = "kept"
            try container.viewContext.save()
        }
        // `user_version` is written to the file: the pragmas ran on the writer.
        #expect(try RawSQLite(url).rows("PRAGMA user_version").first?.first as? Int64 == 7)

        // The timeout bounds the wait for another connection's write lock.
        let blocker = try RawSQLite(url, writable: true)
        _ = try blocker.rows("BEGIN IMMEDIATE")
        let started = Date()
        let error = container.viewContext.performAndWait { () -> CoreDataError? in
            Note(context: container.viewContext).text1 = "waits"
            do { try container.viewContext.save(); return nil } catch { return error as? CoreDataError }
        }
        let waited = Date().timeIntervalSince(started)
        _ = try blocker.rows("ROLLBACK")
        #expect(error?.code == .persistentStoreTimeout)
        #expect(waited >= 2 && waited < 9, "waited \(waited) s for a 2.5 s timeout (the default is 10 s)")
        // Once the lock is free, the same save goes through.
        try container.viewContext.performAndWait { () throws in try container.viewContext.save() }
        #expect(try RawSQLite(url).rows("SELECT COUNT(*) FROM ZNOTE").first?.first as? Int64 == 2)
    }

    @Test(arguments: [
        ["synchronous; DROP TABLE ZNOTE": "FULL"] as [String: any Sendable],
        ["synchronous": "FULL; DROP TABLE ZNOTE"],
        ["synchronous": Date()],
        ["no_such_pragma_at_all(": 1],
    ])
    func pragmasThatAreNotPlainNamesAndValuesAreRefused(_ pragmas: [String: any Sendable]) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Refused.sqlite")
        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: url, model: Self.model) { $0.setOption(pragmas, forKey: NSSQLitePragmasOption) }
        }
        #expect(error.code == .persistentStoreOpen)
        #expect(error.message.contains("NSSQLitePragmasOption"))
    }

    @Test func removingAStoreClosesEveryConnectionToItsFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Closed.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: Self.model)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            Note(context: context).text1 = "a"
            try context.save()
        }
        // Several reads at once, so that several reader connections open.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let reader = container.newBackgroundContext()
            reader.performAndWait { _ = try? reader.count(for: Note.fetchRequest()) }
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        // Leaving WAL mode needs the only connection to the file.
        let raw = try RawSQLite(url, writable: true)
        #expect(try raw.rows("PRAGMA journal_mode = DELETE").first?.first as? String == "delete")
    }
}
