import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// Query generations: a pinned context reads the store as it was when it pinned, until it
/// advances (its save, a merge, a reset, a new token).
@Suite(.dedicatedThread) struct QueryGenerationTests {
    /// Notes 1…3 saved; returns their IDs by note id.
    private func seed(_ stack: TestStack) throws -> [Int32: ManagedObjectID] {
        let context = try stack.seededContext(ids: 1...3) { note, id in note.text1 = "v1-\(id)" }
        return try context.performAndWait { Dictionary(uniqueKeysWithValues: try context.fetch(Note.fetchRequest()).map { ($0.id, $0.objectID) }) }
    }

    /// The stores whose reads a generation pins: SQLite (WAL) and PostgreSQL.
    static let pinnedKinds = StoreKind.allCases.filter { $0 != .inMemory }

    /// Another coordinator on the same store changes the notes: note 1 updated, note 2 deleted,
    /// note 4 inserted (what another process would do).
    private func changeElsewhere(_ stack: TestStack, version: String = "v2") throws {
        let elsewhere: PersistentContainer
        if stack.kind == .postgreSQL {
            elsewhere = PersistentContainer(name: "Elsewhere", managedObjectModel: stack.container.managedObjectModel)
            let url = try #require(stack.container.persistentStoreCoordinator.persistentStores.first?.url)
            elsewhere.persistentStoreDescriptions = [PersistentStoreDescription(url: url, type: .postgreSQL)]
            try elsewhere.loadPersistentStores()
        } else {
            elsewhere = try PersistentContainer.loaded(at: stack.storeURL, model: stack.container.managedObjectModel)
        }
        let context = elsewhere.newBackgroundContext()
        try context.performAndWait { () throws in
            let notes = try context.fetch(Note.fetchRequest())
            for note in notes where note.id == 1 || note.id == 3 { note.text1 = "\(version)-\(note.id)" }
            if let two = notes.first(where: { $0.id == 2 }) { context.delete(two) }
            let four = Note(context: context)
            four.id = Int32(4 + notes.count * 10)
            try context.save()
        }
    }

    private func snapshot(_ context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait {
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            return try context.fetch(request).map { "\($0.id):\($0.text1 ?? "-")" }
        }
    }

    @Test(arguments: pinnedKinds)
    func aPinnedContextKeepsReadingItsGenerationUntilItAdvances(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seed(stack)
        let pinned = stack.container.newBackgroundContext()
        let unpinned = stack.container.newBackgroundContext()
        try pinned.performAndWait { () throws in
            #expect(pinned.queryGenerationToken == nil)
            try pinned.setQueryGenerationFrom(.current)
            #expect(pinned.queryGenerationToken != nil)
            #expect(try pinned.count(for: Note.fetchRequest()) == 3)      // the generation starts here
        }
        try changeElsewhere(stack)

        // Fetches, counts and faults read the generation; the unpinned context reads the store.
        #expect(try snapshot(pinned) == ["1:v1-1", "2:v1-2", "3:v1-3"])
        #expect(try snapshot(unpinned) == ["1:v2-1", "3:v2-3", "34:-"])
        try pinned.performAndWait { () throws in
            #expect(try pinned.count(for: Note.fetchRequest()) == 3)
            pinned.reset()                                   // a reset advances the generation…
            #expect(pinned.queryGenerationToken != nil)      // …and stays pinned
            let three = try #require(ids[3])
            #expect((pinned.object(with: three) as? Note)?.text1 == "v2-3")
        }
        #expect(try snapshot(pinned) == ["1:v2-1", "3:v2-3", "34:-"])

        // Unpinned again, it follows the store.
        try pinned.performAndWait { () throws in
            try pinned.setQueryGenerationFrom(nil)
            #expect(pinned.queryGenerationToken == nil)
        }
        try changeElsewhere(stack, version: "v3")
        // (Registered objects keep their values until refreshed, pinned or not.)
        pinned.performAndWait { pinned.refreshAllObjects() }
        unpinned.performAndWait { unpinned.refreshAllObjects() }
        let now = try snapshot(pinned)
        #expect(now.contains("1:v3-1"))
        #expect(now == (try snapshot(unpinned)))
    }

    /// Each generation holds a connection of its own on PostgreSQL: beyond the URL's
    /// `generations=` a pinned read is refused (134090, saying how to let one go) instead of
    /// opening connections without end, and room comes back when a pinned context lets go.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func postgreSQLGenerationsAreCappedByTheURL() throws {
        let directory = TemporaryDirectory()
        defer { TestPostgreSQL.drop([directory.schemaName]) }
        var components = try #require(URLComponents(url: try TestPostgreSQL.storeURL(schema: directory.schemaName), resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "generations", value: "2")]
        let container = PersistentContainer(name: "Capped", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: try #require(components.url), type: .postgreSQL)]
        try container.loadPersistentStores()
        let writer = container.newBackgroundContext()
        func pinnedReader(after id: Int32) throws -> ManagedObjectContext {
            try writer.performAndWait { () throws in
                Note(context: writer).id = id
                try writer.save()
            }
            return container.newBackgroundContext()
        }
        let (first, second, third) = (try pinnedReader(after: 1), try pinnedReader(after: 2), try pinnedReader(after: 3))
        for (context, count) in [(first, 3), (second, 3)] {
            try context.performAndWait { () throws in
                try context.setQueryGenerationFrom(.current)
                #expect(try context.count(for: Note.fetchRequest()) == count)
            }
        }
        try third.performAndWait { () throws in
            try third.setQueryGenerationFrom(.current)
            let error = try #require(throws: CoreDataError.self) { try third.count(for: Note.fetchRequest()) }
            #expect(error.code == .persistentStoreTimeout)
            #expect(error.message.contains("generations="))
        }
        try first.performAndWait { try first.setQueryGenerationFrom(nil) }
        try third.performAndWait { () throws in
            #expect(try third.count(for: Note.fetchRequest()) == 3)
        }
        #expect(throws: CoreDataError.self) {
            components.queryItems = [URLQueryItem(name: "generations", value: "0")]
            let refused = PersistentContainer(name: "Refused", managedObjectModel: ManagedObjectModel(Note.self))
            refused.persistentStoreDescriptions = [PersistentStoreDescription(url: try #require(components.url), type: .postgreSQL)]
            try refused.loadPersistentStores()
        }
    }

    /// A read the server refuses (PostgreSQL aborts the snapshot's transaction on any error) leaves
    /// the generation readable, still at its moment.
    @Test(.enabled(if: TestPostgreSQL.isConfigured, "OCD_POSTGRES_URL is not set"))
    func aFailedReadDoesNotEndAPinnedGeneration() throws {
        let stack = try TestStack(.postgreSQL)
        _ = try seed(stack)
        let pinned = stack.container.newBackgroundContext()
        try pinned.performAndWait { () throws in
            try pinned.setQueryGenerationFrom(.current)
            #expect(try pinned.count(for: Note.fetchRequest()) == 3)
        }
        try changeElsewhere(stack)
        try pinned.performAndWait { () throws in
            let refused = Note.fetchRequest()
            refused.predicate = NSPredicate(format: "text1 == %@", "a\u{0}b")   // PostgreSQL text cannot hold U+0000
            #expect(throws: CoreDataError.self) { try pinned.fetch(refused) }
        }
        #expect(try snapshot(pinned) == ["1:v1-1", "2:v1-2", "3:v1-3"])
    }

    @Test(arguments: pinnedKinds)
    func aFaultOfAPinnedContextDoesNotTakeNewerRowsFromTheCache(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let oneID = try #require(try seed(stack)[1])
        let pinned = stack.container.newBackgroundContext()
        try pinned.performAndWait { () throws in
            try pinned.setQueryGenerationFrom(.current)
            _ = try pinned.count(for: Note.fetchRequest())
        }
        // A context of the same coordinator saves: the coordinator's row cache has the new row.
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            let one = try #require(try writer.existingObject(with: oneID) as? Note)
            one.text1 = "cached"
            try writer.save()
        }
        try pinned.performAndWait { () throws in
            let one = try #require(pinned.object(with: oneID) as? Note)
            #expect(one.text1 == "v1-1")
        }
        // The pinned read did not put its older row in the cache for others.
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            #expect((try reader.existingObject(with: oneID) as? Note)?.text1 == "cached")
        }
    }

    @Test(arguments: pinnedKinds)
    func savingAndMergingAdvanceTheGeneration(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seed(stack)
        let pinned = stack.container.newBackgroundContext()
        try pinned.performAndWait { () throws in
            try pinned.setQueryGenerationFrom(.current)
            _ = try pinned.count(for: Note.fetchRequest())
        }
        try changeElsewhere(stack)
        let before = try pinned.performAndWait { () throws in
            let token = pinned.queryGenerationToken
            let note = Note(context: pinned)
            note.id = 100
            try pinned.save()                                   // its own save advances it
            #expect(pinned.queryGenerationToken != token)
            return token
        }
        #expect(before != nil)
        #expect(try snapshot(pinned).map { $0.split(separator: ":")[0] } == ["1", "3", "34", "100"])

        // A merged save advances it too.
        let writer = stack.container.newBackgroundContext()
        let saved = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { saved.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try writer.performAndWait { () throws in
            let note = Note(context: writer)
            note.id = 200
            try writer.save()
        }
        #expect(try snapshot(pinned).count == 4)
        let note = try #require(saved.values.first)
        pinned.performAndWait { pinned.mergeChanges(fromContextDidSave: note) }
        #expect(try snapshot(pinned).count == 5)
    }

    @Test(arguments: pinnedKinds)
    func anotherContextsTokenAlignsTheTwo(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seed(stack)
        let first = stack.container.newBackgroundContext()
        let token = try first.performAndWait { () throws in
            try first.setQueryGenerationFrom(.current)
            _ = try first.count(for: Note.fetchRequest())
            return try #require(first.queryGenerationToken)
        }
        try changeElsewhere(stack)
        let second = stack.container.newBackgroundContext()
        try second.performAndWait { try second.setQueryGenerationFrom(token) }
        #expect(try snapshot(second) == ["1:v1-1", "2:v1-2", "3:v1-3"])
        #expect(second.performAndWait { second.queryGenerationToken } == token)
        #expect(try snapshot(first) == (try snapshot(second)))
    }

    @Test func childContextsCannotBePinnedAndInMemoryStoresReadUnpinned() throws {
        let stack = try TestStack(.inMemory)
        _ = try seed(stack)
        let parent = stack.container.newBackgroundContext()
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        child.performAndWait {
            #expect(throws: CoreDataError.self) { try child.setQueryGenerationFrom(.current) }
            #expect(child.queryGenerationToken == nil)
        }
        try parent.performAndWait { () throws in
            try parent.setQueryGenerationFrom(.current)
            _ = try parent.count(for: Note.fetchRequest())
        }
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            Note(context: writer).id = 9
            try writer.save()
        }
        // An in-memory store has no snapshots: the pinned context sees the new note.
        #expect(try snapshot(parent).count == 4)
    }
}
