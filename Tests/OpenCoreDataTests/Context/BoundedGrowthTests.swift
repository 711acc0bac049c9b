import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A server runs for weeks: what the stack remembers between saves must not grow with the
/// number of saves (only with what is live).
@Suite(.dedicatedThread) struct BoundedGrowthTests {
    @Test func theRowCacheStaysNearTheRowsItHoldsUnderUpdatesAndDeletes() {
        let entity = ManagedObjectModel(Note.self).entitiesByName["Note"]!
        let cache = RowCache(capacity: 10_000)
        // A steady workload: the same hundred rows saved (cached), deleted (removed), inserted
        // again, a hundred thousand times over.
        for round in 0..<1_000 {
            let ids = (0..<100).map { ManagedObjectID.permanent(entity, store: "S", primaryKey: Int64($0)) }
            cache.store(ids.map { ($0, RowSnapshot(values: [], version: Int64(round + 1))) })
            cache.remove(Array(ids.prefix(50)))
        }
        #expect(cache.count == 50)
        // A table sized for what it holds, not for the hundred thousand rows that went through it.
        #expect(cache.tableCapacity <= 256, "the cache has \(cache.tableCapacity) buckets for \(cache.count) rows")
        // Past capacity the oldest half still goes.
        let many = (0..<20_000).map { ManagedObjectID.permanent(entity, store: "T", primaryKey: Int64($0)) }
        cache.store(many.map { ($0, RowSnapshot(values: [], version: 1)) })
        #expect(cache.count <= 10_050)
        #expect(cache.snapshot(for: many[0]) == nil)
        #expect(cache.snapshot(for: many.last!) != nil)
    }

    /// One list of more rows than the cache holds (a large save or load) leaves the newest rows
    /// and nothing older: no row it held before answers with its old version.
    @Test func moreRowsThanTheCacheHoldsLeaveTheNewestAndNothingOlder() {
        let entity = ManagedObjectModel(Note.self).entitiesByName["Note"]!
        let cache = RowCache(capacity: 100)
        let ids = (0..<250).map { ManagedObjectID.permanent(entity, store: "S", primaryKey: Int64($0)) }
        cache.store(ids.prefix(60).map { ($0, RowSnapshot(values: [.string("old")], version: 1)) })
        #expect(cache.snapshot(for: ids[0]) == RowSnapshot(values: [.string("old")], version: 1))
        cache.store(ids.map { ($0, RowSnapshot(values: [.string("new")], version: 2)) })
        #expect(cache.count == 100)
        #expect(cache.tableCapacity <= 256)
        for (index, id) in ids.enumerated() {
            let expected = index >= 150 ? RowSnapshot(values: [.string("new")], version: 2) : nil
            #expect(cache.snapshot(for: id) == expected, "row \(index)")
        }
    }

    @Test func theRowCacheKeepsTheNewestVersionOfARow() {
        let entity = ManagedObjectModel(Note.self).entitiesByName["Note"]!
        let cache = RowCache(capacity: 100)
        let id = ManagedObjectID.permanent(entity, store: "S", primaryKey: 1)
        cache.store([(id, RowSnapshot(values: [.string("two")], version: 2))])
        // A save that read the row earlier finishes later: its older version does not win.
        cache.store([(id, RowSnapshot(values: [.string("one")], version: 1))])
        #expect(cache.snapshot(for: id) == RowSnapshot(values: [.string("two")], version: 2))
        cache.store([(id, RowSnapshot(values: [.string("three")], version: 3))])
        #expect(cache.snapshot(for: id) == RowSnapshot(values: [.string("three")], version: 3))
        #expect(cache.count == 1)
    }

    /// Rows a save wrote wait as the save's list of updates until the cache is next used; the
    /// answers are those of a cache that took them at once.
    @Test func rowsASaveWroteAnswerAsIfCachedAtOnce() {
        let entity = ManagedObjectModel(Note.self).entitiesByName["Note"]!
        let cache = RowCache(capacity: 1_000)
        let store = StoreNumbers.number(for: "S")
        // An update that read `version - 1` and wrote `text`: the row is cached at `version`.
        func update(_ key: Int64, _ text: String, version: Int64) -> StoreSaveRequest.Update {
            .init(entity: entity, primaryKey: key, expectedVersion: version - 1, slots: [1], values: [.integer(key), .string(text)])
        }
        let id = ManagedObjectID.permanent(entity, storeNumber: store, primaryKey: 1)
        cache.storeSaved([update(1, "two", version: 2)], store: store)
        cache.storeSaved([update(1, "three", version: 3)], store: store)
        // A load that read the row before those saves does not bring back its older version.
        cache.store([(id, RowSnapshot(values: [.integer(1), .string("one")], version: 1))])
        #expect(cache.snapshot(for: id) == RowSnapshot(values: [.integer(1), .string("three")], version: 3))
        // A row saved, then deleted by the next save: gone, and it does not come back later.
        cache.storeSaved([update(1, "four", version: 4)], store: store)
        cache.remove([id])
        #expect(cache.snapshot(for: id) == nil)
        #expect(cache.count == 0)
        // More saved rows than the cache holds: the older half goes, the newest rows stay.
        for chunk in stride(from: 10, to: 1_510, by: 500) {
            cache.storeSaved((chunk..<chunk + 500).map { update(Int64($0), "n", version: 1) }, store: store)
        }
        #expect(cache.count <= 1_000)
        #expect(cache.snapshot(for: .permanent(entity, storeNumber: store, primaryKey: 10)) == nil)
        #expect(cache.snapshot(for: .permanent(entity, storeNumber: store, primaryKey: 1_509)) == RowSnapshot(values: [.integer(1_509), .string("n")], version: 1))
    }

    @Test func aParentForgetsRetiredTemporaryIDsOnceItsChildrenAreGone() throws {
        let stack = try TestStack(.sqlite)
        let parent = stack.container.newBackgroundContext()
        do {
            let child = ManagedObjectContext(concurrencyType: .privateQueue)
            child.parent = parent
            let note = try child.performAndWait { () throws in
                let note = Note(context: child)
                note.text1 = "from the child"
                try child.save()
                return note
            }
            try parent.performAndWait { () throws in try parent.save() }
            // While the child lives, the parent remembers the IDs it may still use.
            parent.performAndWait { #expect(parent.graph.retiredTemporaryIDs.count == 1) }
            // … and its next push with the old temporary ID lands on the saved object.
            try child.performAndWait { () throws in
                #expect(note.objectID.isTemporaryID, "a child keeps the temporary ID after its parent saves")
                note.text2 = "changed later"
                try child.save()
            }
            try parent.performAndWait { () throws in
                try parent.save()
                #expect(try parent.fetch(Note.fetchRequest()).map(\.text2) == ["changed later"])
            }
        }
        // The child is gone: the next saves forget them, however many there are.
        for round in 0..<20 {
            try parent.performAndWait { () throws in
                for _ in 0..<50 { Note(context: parent).id = Int32(round) }
                try parent.save()
            }
        }
        parent.performAndWait { #expect(parent.graph.retiredTemporaryIDs.isEmpty) }
    }

    /// A service reads page after page through one long-lived context and keeps none of them:
    /// the objects of old pages go (as weakly held objects would), however large each fetch is
    /// and however many pages were read.
    @Test(arguments: StoreKind.allCases)
    func aContextReadingPageAfterPageLetsOldPagesGo(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try context.execute(BatchInsertRequest(entityName: "Note", objects: (0..<20_000).map { ["id": $0] }))
            weak var firstOfFirstPage: Note?
            for page in 0..<10 {
                let request = Note.fetchRequest()
                request.predicate = NSPredicate(format: "id >= %d AND id < %d", page * 2_000, (page + 1) * 2_000)
                let notes = try context.fetch(request)
                #expect(notes.count == 2_000)
                if page == 0 { firstOfFirstPage = notes.first }
            }
            #expect(firstOfFirstPage == nil, "the context still holds the objects of the first of ten pages")
        }
    }
}
