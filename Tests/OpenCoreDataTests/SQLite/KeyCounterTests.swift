import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A key counter (`Z_PRIMARYKEY.Z_MAX`) that a damaged or crafted store holds never makes key
/// arithmetic trap: the insert or batch insert that would need keys past `Int64.max` is refused
/// with 134000, nothing is written, and the store still reads.
@Suite(.dedicatedThread) struct KeyCounterTests {
    /// Sets the counter of the notes' table as the file (or schema) holds it, bypassing the library.
    static func setCounter(_ value: String, in stack: TestStack) throws {
        switch stack.kind {
        case .sqlite:
            try RawSQLite(stack.storeURL, writable: true).execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(value) WHERE Z_NAME = 'Note'")
        case .postgreSQL:
            let url = try #require(stack.container.persistentStoreDescriptions.first?.url)
            let store = try PostgreSQLStoreURL(url)
            let session = try PostgreSQLSession.connect(store)
            defer { session.close() }
            try session.execute(text: "UPDATE " + PostgreSQLSQL.quoted(store.schema) + ".Z_PRIMARYKEY SET Z_MAX = \(value) WHERE Z_NAME = 'Note'")
        case .inMemory:
            Issue.record("an in-memory store has no counter to damage")
        }
    }

    static let damaged: [String] = ["9223372036854775807", "9223372036854775806", "9223372036854775805", "-5"]
    static let kinds: [StoreKind] = StoreKind.allCases.filter { $0 != .inMemory }

    @Test(arguments: kinds, damaged)
    func aCounterNearInt64MaxRefusesInsertsInsteadOfTrapping(kind: StoreKind, counter: String) throws {
        let stack = try TestStack(kind)
        _ = try stack.seededContext(ids: 1...2)
        try Self.setCounter(counter, in: stack)

        let context = stack.container.newBackgroundContext()
        let saveError = try context.performAndWait { () throws in
            for id in 0..<3 { Note(context: context).id = Int32(10 + id) }
            return try #require(throws: CoreDataError.self) { try context.save() }
        }
        #expect(saveError.code == .persistentStoreInvalidType)
        #expect(saveError.message.contains("Z_PRIMARYKEY.Z_MAX"))

        let batchError = try context.performAndWait { () throws in
            try #require(throws: CoreDataError.self) {
                try context.execute(BatchInsertRequest(entityName: "Note", objects: [["id": 20], ["id": 21]]))
            }
        }
        #expect(batchError.code == .persistentStoreInvalidType)

        // Nothing was written, and what the store holds still reads.
        let reader = stack.container.newBackgroundContext()
        let ids = try reader.performAndWait { () throws in try reader.fetch(Note.fetchRequest()).map(\.id).sorted() }
        #expect(ids == [1, 2])
    }

    @Test func aCounterSQLiteHoldsAsARealPastInt64IsRefused() throws {
        let stack = try TestStack(.sqlite)
        _ = try stack.seededContext(ids: 1...1)
        try Self.setCounter("1e30", in: stack)
        let context = stack.container.newBackgroundContext()
        let error = try context.performAndWait { () throws in
            Note(context: context).id = 2
            return try #require(throws: CoreDataError.self) { try context.save() }
        }
        #expect(error.code == .persistentStoreInvalidType)
    }

    @Test func aCounterRaisedToTheLastKeyThatFitsStillHandsItOut() throws {
        let stack = try TestStack(.sqlite)
        _ = try stack.seededContext(ids: 1...1)
        try Self.setCounter(String(Int64.max - 3), in: stack)
        let context = stack.container.newBackgroundContext()
        let key = try context.performAndWait { () throws in
            let note = Note(context: context)
            try context.save()
            return note.objectID.uriRepresentation().lastPathComponent
        }
        #expect(key == "p\(Int64.max - 2)")
    }
}

/// History tables are checked as entity tables are when a store opens: an `ATRANSACTION` or
/// `ACHANGE` that does not key its rows by `Z_PK INTEGER PRIMARY KEY` (and so may hold two
/// transactions of one number) is refused with 134000 instead of trapping the history reader.
@Suite(.dedicatedThread) struct HistoryTableKeyTests {
    @Test(arguments: ["ATRANSACTION", "ACHANGE"])
    func aHistoryTableWithoutItsIntegerKeyIsRefusedWhenTheStoreOpens(table: String) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("History.sqlite")
        let configure = { (description: PersistentStoreDescription) in description.setOption(true, forKey: NSPersistentHistoryTrackingKey) }
        do {
            let container = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Note.self), configure: configure)
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                for id in 1...2 {
                    Note(context: context).id = Int32(id)
                    try context.save()
                }
            }
        }
        // Rebuilt as a plain table holding every row twice.
        let raw = try RawSQLite(url, writable: true)
        try raw.execute("CREATE TABLE COPY AS SELECT * FROM \(table)")
        try raw.execute("DROP TABLE \(table)")
        try raw.execute("CREATE TABLE \(table) AS SELECT * FROM COPY")
        try raw.execute("INSERT INTO \(table) SELECT * FROM COPY")
        try raw.execute("DROP TABLE COPY")

        let error = try #require(throws: CoreDataError.self) {
            _ = try PersistentContainer.loaded(at: url, model: ManagedObjectModel(Note.self), configure: configure)
        }
        #expect(error.code == .persistentStoreInvalidType)
        #expect(error.message.contains(table))
    }
}
