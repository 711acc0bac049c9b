import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import OpenCoreDataSQLite
import Testing
import TestSupport

/// `migratePersistentStore(_:to:options:type:)` between store types: every object, relationship,
/// many-to-many pair and order arrives; the copy keeps the store's UUID (so object URIs stay
/// valid), replaces the source in the coordinator and takes new objects under fresh keys.
@Suite(.dedicatedThread) struct MigrateStoreTests {
    static let model = ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self, Playlist.self, Track.self)

    /// Source and destination kinds: SQLite to each other kind, and each other kind back to SQLite.
    static var moves: [(StoreKind, StoreKind)] {
        StoreKind.allCases.filter { $0 != .sqlite }.flatMap { [(.sqlite, $0), ($0, .sqlite)] }
    }

    private func destination(_ kind: StoreKind, in directory: TemporaryDirectory) throws -> (URL, PersistentStore.StoreType) {
        switch kind {
        case .sqlite: (directory.file("Moved.sqlite"), .sqlite)
        case .inMemory: (directory.file("unused"), .inMemory)
        case .postgreSQL: (try TestPostgreSQL.storeURL(schema: directory.schemaName + "_moved"), .postgreSQL)
        }
    }

    @Test(arguments: moves)
    func everyObjectRelationshipAndOrderArrives(from: StoreKind, to: StoreKind) throws {
        let directory = TemporaryDirectory()
        defer { TestPostgreSQL.drop([directory.schemaName + "_moved"]) }
        let stack = try TestStack(from, model: Self.model, directory: directory)
        let setup = stack.container.newBackgroundContext()
        try setup.performAndWait { () throws in
            let drawer = Drawer(context: setup)
            drawer.label = "desk"
            let folder = Folder(context: setup)
            folder.title = "inbox"
            folder.drawer = drawer
            let (red, blue) = (Tag(context: setup), Tag(context: setup))
            (red.name, blue.name) = ("red", "blue")
            for index in 0..<5 {
                let memo = Memo(context: setup)
                memo.body = "memo \(index)"
                memo.folder = folder
                memo.tags = index.isMultiple(of: 2) ? [red, blue] : [blue]
            }
            let playlist = Playlist(context: setup)
            playlist.name = "mix"
            playlist.tracks = ["c", "a", "d", "b"].map { title in
                let track = Track(context: setup)
                track.title = title
                return track
            }
            try setup.save()
        }
        let coordinator = stack.container.persistentStoreCoordinator
        let source = try #require(coordinator.persistentStores.first)
        let sourceIdentifier = source.identifier
        let folderURI = try setup.performAndWait { () throws in
            try #require(try setup.fetch(FetchRequest<Folder>(entityName: "Folder")).first).objectID.uriRepresentation()
        }
        let (url, type) = try destination(to, in: directory)
        let moved = try coordinator.migratePersistentStore(source, to: url, type: type)
        #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores.first === moved)
        #expect(moved.type == type)
        #expect(moved.identifier == sourceIdentifier)
        #expect(coordinator.metadata(for: moved)[NSStoreUUIDKey] as? String == sourceIdentifier)

        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let folder = try #require(try reader.fetch(FetchRequest<Folder>(entityName: "Folder")).first)
            #expect(folder.objectID.storeIdentifier == moved.identifier)
            // A URI taken before the move names the same object after it.
            let known = try #require(coordinator.managedObjectID(forURIRepresentation: folderURI))
            #expect((try reader.existingObject(with: known) as? Folder)?.title == "inbox")
            #expect(folder.title == "inbox" && folder.drawer?.label == "desk")
            #expect(folder.memos.map(\.body).sorted() == (0..<5).map { "memo \($0)" })
            let tags = try reader.fetch(FetchRequest<Tag>(entityName: "Tag"))
            #expect(Dictionary(uniqueKeysWithValues: tags.map { ($0.name, $0.memos.count) }) == ["red": 3, "blue": 5])
            let playlist = try #require(try reader.fetch(FetchRequest<Playlist>(entityName: "Playlist")).first)
            #expect(playlist.tracks.map(\.title) == ["c", "a", "d", "b"])
            // New objects get keys after the copied ones.
            let tag = Tag(context: reader)
            tag.name = "green"
            try reader.save()
            let count = try reader.count(for: FetchRequest<Tag>(entityName: "Tag"))
            #expect(count == 3)
        }
    }

    private func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil) throws -> [PersistentHistoryTransaction] {
        try context.performAndWait { () throws in try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions }
    }

    /// History moves with the store when both record it: the same transactions under the same
    /// numbers, authors, changes and tombstones, so that a token taken before the move reads the
    /// same changes after it; the copying itself is not recorded, and new saves number after.
    @Test(arguments: moves)
    func historyMovesWithTheStoreAndTokensKeepTheirMeaning(from: StoreKind, to: StoreKind) throws {
        let directory = TemporaryDirectory()
        defer { TestPostgreSQL.drop([directory.schemaName + "_moved"]) }
        let tracking: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true]
        let stack = try TestStack(from, model: ManagedObjectModel(Entry.self, Note.self), directory: directory, options: tracking)
        let context = stack.container.newBackgroundContext()
        context.transactionAuthor = "sync"
        let coordinator = stack.container.persistentStoreCoordinator
        let token = try context.performAndWait { () throws -> PersistentHistoryToken? in
            let (kept, gone) = (Entry(context: context), Entry(context: context))
            (kept.code, gone.code) = ("kept", "gone")
            try context.save()
            let token = coordinator.currentPersistentHistoryToken()
            kept.value = 7
            try context.save()
            context.delete(gone)
            try context.save()
            return token
        }
        func summary(_ transactions: [PersistentHistoryTransaction]) -> [String] {
            transactions.map { transaction in
                "\(transaction.token.transactionNumber) \(transaction.author ?? "-") " + (transaction.changes ?? []).map { change in
                    "\(change.changeType) \(change.updatedPropertyNames?.sorted() ?? []) \(change.tombstone?["code"] as? String ?? "")"
                }.sorted().joined(separator: ", ")
            }
        }
        let before = try history(context)
        #expect(before.count == 3)
        let (url, type) = try destination(to, in: directory)
        try coordinator.migratePersistentStore(try #require(coordinator.persistentStores.first), to: url, options: tracking, type: type)

        let reader = stack.container.newBackgroundContext()
        reader.transactionAuthor = "after"
        #expect(summary(try history(reader)) == summary(before))
        #expect(summary(try history(reader, after: token)) == summary(Array(before.dropFirst())))
        try reader.performAndWait { () throws in
            let entry = Entry(context: reader)
            entry.code = "new"
            try reader.save()
        }
        let last = try #require(try history(reader).last)
        #expect(last.author == "after")
        #expect(last.token.transactionNumber == (before.last?.token.transactionNumber ?? 0) + 1)
    }

    /// A copy is made a batch at a time (5,000 rows a save, 1,000 history transactions a page),
    /// so that a large store never sits in memory whole: rows across batches arrive under their
    /// keys with their many-to-many pairs, and history across pages keeps every transaction in
    /// order under its number.
    @Test(arguments: moves)
    func aCopyLargerThanABatchArrivesWhole(from: StoreKind, to: StoreKind) throws {
        let directory = TemporaryDirectory()
        defer { TestPostgreSQL.drop([directory.schemaName + "_moved"]) }
        let tracking: [String: any Sendable] = [NSPersistentHistoryTrackingKey: true]
        let stack = try TestStack(from, model: Self.model, directory: directory, options: tracking)
        let context = stack.container.newBackgroundContext()
        let coordinator = stack.container.persistentStoreCoordinator
        try context.performAndWait { () throws in
            _ = try context.execute(BatchInsertRequest(entityName: "Memo", objects: (0..<5_300).map { ["body": "memo \($0)"] }))
            let (red, blue) = (Tag(context: context), Tag(context: context))
            (red.name, blue.name) = ("red", "blue")
            try context.save()
            // Tags on memos of both batches; then small saves until history spans two pages.
            for (index, memo) in try context.fetch(Memo.fetchRequest()).enumerated() where index % 1_000 == 999 {
                memo.tags = [red, blue]
            }
            try context.save()
            for index in 0..<1_001 {
                red.name = "red \(index)"
                try context.save()
            }
        }
        let before = try history(context).map(\.token.transactionNumber)
        #expect(before.count == 1_004)
        let (url, type) = try destination(to, in: directory)
        try coordinator.migratePersistentStore(try #require(coordinator.persistentStores.first), to: url, options: tracking, type: type)

        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let memos = try reader.fetch(Memo.fetchRequest())
            #expect(memos.count == 5_300)
            #expect(Set(memos.map(\.body)).count == 5_300)
            let tagged = memos.filter { !$0.tags.isEmpty }.map(\.body).sorted()
            #expect(tagged == (0..<5_300).filter { $0 % 1_000 == 999 }.map { "memo \($0)" }.sorted())
        }
        #expect(try history(reader).map(\.token.transactionNumber) == before)
    }

    /// A PostgreSQL store carries its model, so that tools (`ocd copy`) open it without the
    /// app's model file.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aPostgreSQLStoreCarriesItsModel() throws {
        let directory = TemporaryDirectory()
        let stack = try TestStack(.postgreSQL, model: Self.model, directory: directory)
        let url = try #require(stack.container.persistentStoreCoordinator.persistentStores.first?.url)
        let cached = try ManagedObjectModel(cachedInPostgreSQLStoreAt: url)
        #expect(cached.entityVersionHashesByName == Self.model.entityVersionHashesByName)
        #expect(throws: CoreDataError.self) { try ManagedObjectModel(cachedInPostgreSQLStoreAt: try TestPostgreSQL.storeURL(schema: directory.schemaName + "_none")) }
    }

    @Test func aDestinationThatHoldsObjectsIsRefusedAndTheSourceStays() throws {
        let directory = TemporaryDirectory()
        let occupied = try TestStack(.sqlite, model: Self.model, directory: directory, name: "Occupied")
        let context = occupied.container.newBackgroundContext()
        try context.performAndWait { () throws in
            Tag(context: context).name = "already here"
            try context.save()
        }
        let stack = try TestStack(.sqlite, model: Self.model, directory: directory)
        let coordinator = stack.container.persistentStoreCoordinator
        let source = try #require(coordinator.persistentStores.first)
        #expect(throws: CoreDataError.self) {
            try coordinator.migratePersistentStore(source, to: directory.file("Occupied.sqlite"), type: .sqlite)
        }
        #expect(coordinator.persistentStores.first === source)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".migrating") } == [])
    }

    /// An SQLite destination is written beside it and put in place in one transaction (a kill -9
    /// in the middle leaves no half-copied store: `Reliability/run`, *kill -9 during migrate
    /// store*). What a crashed attempt left beside it is cleared, and nothing stays behind.
    @Test func aCrashedAttemptsLeftoversAreClearedAndOnlyTheStoreStays() throws {
        let directory = TemporaryDirectory()
        let stack = try TestStack(.sqlite, model: Self.model, directory: directory)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for name in ["red", "blue"] { Tag(context: context).name = name }
            try context.save()
        }
        let destination = directory.file("Moved.sqlite")
        // Half a file and a WAL, as a process killed while copying leaves them.
        try Data(repeating: 0xA5, count: 10_000).write(to: directory.file(".Moved.sqlite.migrating"))
        try Data(repeating: 0x5A, count: 4_000).write(to: directory.file(".Moved.sqlite.migrating-wal"))
        let coordinator = stack.container.persistentStoreCoordinator
        try coordinator.migratePersistentStore(try #require(coordinator.persistentStores.first), to: destination, type: .sqlite)
        let names = try context.performAndWait { try context.fetch(Tag.fetchRequest()).compactMap(\.name).sorted() }
        #expect(names == ["blue", "red"])
        #expect(coordinator.persistentStores.first?.url == destination)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".migrating") } == [])
    }

    /// The staged copy is put in place already in WAL mode, in one file: the engine that opens it
    /// there has nothing to write. A switch to WAL at that point went through a rollback journal,
    /// and a kill -9 during it left a hot journal beside the migrated store, which a read-only
    /// open (a backup tool, `NSReadOnlyPersistentStoreOption` in another process) cannot roll
    /// back: "attempt to write a readonly database" (`Reliability/run`, *kill -9 during migrate
    /// store*, 2 rounds of 100).
    @Test func aStorePutInPlaceIsAlreadyInWALModeAndAloneInItsFolder() throws {
        let directory = TemporaryDirectory()
        let staging = try SQLiteStore.stagingFile(for: directory.file("Moved.sqlite"))
        try Self.model.freeze()
        let store = try SQLiteStore(url: staging)
        try store.load(model: Self.model)
        store.close()
        try SQLiteStore.install(staging, at: directory.file("Moved.sqlite"), options: SQLiteStoreOptions())
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Moved.sqlite"])
        let header = try Data(contentsOf: directory.file("Moved.sqlite")).prefix(20)
        #expect(Array(header.suffix(2)) == [2, 2], "file format bytes 18-19: 2 is WAL, 1 is a rollback journal")
        #expect(try RawSQLite(directory.file("Moved.sqlite")).rows("PRAGMA journal_mode").first?.first as? String == "wal")
    }
}
