import OpenCoreData
import Testing
import TestSupport

/// A save that meets a conflict writes nothing, in every store: no row, no many-to-many pair, no
/// order, no history — however many of its writes the store had already made when it found the
/// conflict — and the same save goes through once a policy resolves it.
@Suite(.dedicatedThread) struct SaveAtomicityTests {
    /// What a fresh context reads from the store.
    private struct Stored: Equatable {
        var bodies: [String]
        var tagsOfFirst: [String]
        var tagNames: [String]
        var trackTitles: [String]
        var transactions: Int
    }

    private static func request<T: ManagedObject & ManagedEntity>(_ type: T.Type, where predicate: NSPredicate? = nil, sortedBy key: String? = nil) -> FetchRequest<T> {
        let request = FetchRequest<T>(entityName: T.entityName)
        request.predicate = predicate
        request.sortDescriptors = key.map { [NSSortDescriptor(key: $0, ascending: true)] } ?? []
        return request
    }

    private func stored(_ stack: TestStack) throws -> Stored {
        let context = stack.container.newBackgroundContext()
        return try context.performAndWait { () throws in
            let memos = try context.fetch(Self.request(Memo.self, sortedBy: "body"))
            let first = try context.fetch(Self.request(Memo.self, where: NSPredicate(format: "body BEGINSWITH 'memo 0'")))
            let tags = try context.fetch(Self.request(Tag.self, sortedBy: "name"))
            let playlist = try #require(try context.fetch(Self.request(Playlist.self)).first)
            let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
            return Stored(bodies: memos.map(\.body), tagsOfFirst: first.flatMap(\.tags).map(\.name).sorted(), tagNames: tags.map(\.name),
                          trackTitles: playlist.tracks.map(\.title), transactions: history.count)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aConflictingSaveWritesNothingAndGoesThroughOnceResolved(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self, Playlist.self, Track.self),
                                  options: [NSPersistentHistoryTrackingKey: true])
        let setup = stack.container.newBackgroundContext()
        let memoIDs = try setup.performAndWait { () throws in
            let folder = Folder(context: setup)
            folder.title = "inbox"
            let (red, blue) = (Tag(context: setup), Tag(context: setup))
            (red.name, blue.name) = ("red", "blue")
            let memos = (0..<8).map { index in
                let memo = Memo(context: setup)
                memo.body = "memo \(index)"
                memo.folder = folder
                return memo
            }
            memos[0].tags = [red]
            let playlist = Playlist(context: setup)
            playlist.name = "mix"
            playlist.tracks = ["a", "b", "c"].map { title in
                let track = Track(context: setup)
                track.title = title
                return track
            }
            try setup.save()
            return memos.map(\.objectID)
        }
        let before = try stored(stack)
        #expect(before.bodies == (0..<8).map { "memo \($0)" })
        #expect(before.trackTitles == ["a", "b", "c"])

        // V changes every memo, a relationship pair, the order, inserts and deletes.
        let v = stack.container.newBackgroundContext()
        try v.performAndWait { () throws in
            let memos = try memoIDs.map { try #require(try v.existingObject(with: $0) as? Memo) }
            for memo in memos { memo.body += " by V" }
            let tags = try v.fetch(Self.request(Tag.self, sortedBy: "name"))
            memos[0].tags = [tags[0]]                       // blue instead of red
            let playlist = try #require(try v.fetch(Self.request(Playlist.self)).first)
            let added = Track(context: v)
            added.title = "d"
            playlist.tracks = [playlist.tracks[2], added, playlist.tracks[0], playlist.tracks[1]]
            let extra = Memo(context: v)
            extra.body = "memo 9 by V"
            v.delete(tags[1])                               // red
        }
        // B changes one memo in the middle and saves first.
        let b = stack.container.newBackgroundContext()
        try b.performAndWait { () throws in
            let memo = try #require(try b.existingObject(with: memoIDs[5]) as? Memo)
            memo.body = "memo 5 by B"
            try b.save()
        }
        let afterB = try stored(stack)

        var failure: CoreDataError?
        v.performAndWait {
            do { try v.save() } catch { failure = error as? CoreDataError }
        }
        #expect(failure?.code.rawValue == 133020)
        #expect(failure?.conflicts.map(\.sourceObject.objectID) == [memoIDs[5]])
        let afterConflict = try stored(stack)
        #expect(afterConflict == afterB, "a save that met a conflict changed the store")
        #expect(afterConflict.bodies.contains("memo 5 by B") && afterConflict.bodies.contains("memo 0"))
        #expect(afterConflict.tagsOfFirst == ["red"] && afterConflict.tagNames == ["blue", "red"])
        #expect(afterConflict.trackTitles == ["a", "b", "c"])
        #expect(afterConflict.transactions == before.transactions + 1)

        // Resolved by V's values, the same save is written whole, in one history transaction.
        v.mergePolicy = .mergeByPropertyObjectTrump
        try v.performAndWait { try v.save() }
        let resolved = try stored(stack)
        #expect(resolved.bodies == (0..<8).map { "memo \($0) by V" } + ["memo 9 by V"])
        #expect(resolved.tagsOfFirst == ["blue"] && resolved.tagNames == ["blue"])
        #expect(resolved.trackTitles == ["c", "d", "a", "b"])
        #expect(resolved.transactions == before.transactions + 2)
    }

    /// Deleting several objects that another context changed meanwhile: each changed one is a
    /// conflict and nothing is deleted — the unchanged ones neither; once refreshed, the same
    /// deletions go through.
    @Test(arguments: StoreKind.allCases)
    func deletionsOfChangedObjectsConflictAndDeleteNothing(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self, Playlist.self, Track.self))
        let setup = stack.container.newBackgroundContext()
        let ids = try setup.performAndWait { () throws -> [ManagedObjectID] in
            let memos = (0..<5).map { index in
                let memo = Memo(context: setup)
                memo.body = "memo \(index)"
                return memo
            }
            try setup.save()
            return memos.map(\.objectID)
        }
        let deleter = stack.container.newBackgroundContext()
        try deleter.performAndWait { () throws in
            for id in ids { deleter.delete(try deleter.existingObject(with: id)) }
        }
        let editor = stack.container.newBackgroundContext()
        try editor.performAndWait { () throws in
            for id in [ids[1], ids[3]] { (try editor.existingObject(with: id) as? Memo)?.body += " edited" }
            try editor.save()
        }
        let failure = try #require(throws: CoreDataError.self) { try deleter.performAndWait { try deleter.save() } }
        #expect(failure.code.rawValue == 133020)
        #expect(Set(failure.conflicts.map(\.sourceObject.objectID)) == [ids[1], ids[3]])
        let reader = stack.container.newBackgroundContext()
        let bodies = { try reader.performAndWait { try reader.fetch(Memo.fetchRequest()).map(\.body).sorted() } }
        #expect(try bodies() == ["memo 0", "memo 1 edited", "memo 2", "memo 3 edited", "memo 4"], "nothing was deleted")
        try deleter.performAndWait { () throws in
            deleter.mergePolicy = .mergeByPropertyObjectTrump
            try deleter.save()
        }
        #expect(try bodies().isEmpty)
    }
}
