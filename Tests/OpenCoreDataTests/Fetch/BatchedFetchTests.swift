import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct BatchedFetchTests {
    private func seeded(_ kind: StoreKind, count: Int) throws -> (TestStack, ManagedObjectContext) {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...count) { note, id in note.text1 = "note \(id)" }
        context.performAndWait { context.reset() }
        return (stack, context)
    }

    @Test(arguments: StoreKind.allCases)
    func batchedResultsLoadABatchAtATimeAndKeepMemoryBounded(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind, count: 2_000)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id > 10")
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: false)]
            request.fetchBatchSize = 100
            let results = try context.fetchBatched(request)
            #expect(results.count == 1_990)
            var expected: Int32 = 2_000
            var mostRegistered = 0
            for note in results {
                #expect(note.id == expected)
                #expect(note.text1 == "note \(expected)")
                expected -= 1
                if expected % 100 == 0 { mostRegistered = max(mostRegistered, context.registeredObjects.count) }
            }
            #expect(expected == 10)
            #expect(mostRegistered <= 200, "registered objects: \(mostRegistered)")
            #expect(results[5].id == 1_995)
            #expect(results.last?.id == 11)
        }
        _ = stack
    }

    /// Moving on to the next batch forgets the objects of the batch left behind that nobody
    /// holds, and only those: an object the caller kept from a batch, and the objects the context
    /// held before the iteration, stay registered (the same instances come back).
    @Test(arguments: StoreKind.allCases)
    func movingOnForgetsOnlyTheBatchLeftBehind(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind, count: 1_000)
        try context.performAndWait { () throws in
            let first = Note.fetchRequest()
            first.predicate = NSPredicate(format: "id <= 100")
            let held = try context.fetch(first)
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id > 100")
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            request.fetchBatchSize = 100
            var kept: [Note] = []
            var mostRegistered = 0
            for note in try context.fetchBatched(request) {
                if note.id.isMultiple(of: 250) { kept.append(note) }
                if note.id.isMultiple(of: 100) { mostRegistered = max(mostRegistered, context.registeredObjects.count) }
            }
            #expect(kept.map(\.id) == [250, 500, 750, 1_000])
            #expect(mostRegistered <= held.count + kept.count + 100, "registered objects: \(mostRegistered)")
            for note in held + kept {
                #expect(context.registeredObject(for: note.objectID) === note, "note \(note.id) was forgotten while held")
            }
        }
        _ = stack
    }

    /// A batch whose keys leave gaps (every other row matches) is read as the range they span:
    /// the rows of the gaps come back from the store too, and must neither join the results nor
    /// become objects; every result is its own row, in order, on every store.
    @Test(arguments: StoreKind.allCases, [true, false])
    func aBatchReadAsARangeKeepsOnlyItsOwnRows(kind: StoreKind, ascending: Bool) throws {
        let (stack, context) = try seeded(kind, count: 300)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id IN %@", Array(stride(from: Int32(2), through: 300, by: 2)))
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: ascending)]
            request.fetchBatchSize = 40
            let results = try context.fetchBatched(request)
            #expect(results.count == 150)
            var seen: [Int32] = []
            for note in results {
                #expect(note.text1 == "note \(note.id)")
                seen.append(note.id)
                #expect(context.registeredObjects.allSatisfy { ($0 as? Note)?.id.isMultiple(of: 2) ?? true },
                        "an odd row of a batch's range became an object")
            }
            let evens = Array(stride(from: Int32(2), through: 300, by: 2))
            #expect(seen == (ascending ? evens : evens.reversed()))
        }
        _ = stack
    }

    /// Rows deleted by another context after the keys were read leave faults at their positions;
    /// every other position holds its own row, whichever way the keys run.
    @Test(arguments: StoreKind.allCases, [true, false])
    func rowsDeletedAfterTheKeysWereReadLeaveFaultsInTheirPlaces(kind: StoreKind, ascending: Bool) throws {
        let (stack, context) = try seeded(kind, count: 60)
        let gone: Set<Int32> = [1, 7, 8, 30, 49, 60]
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: ascending)]
            request.fetchBatchSize = 25
            let results = try context.fetchBatched(request)
            let other = stack.container.newBackgroundContext()
            try other.performAndWait { () throws in
                let doomed = Note.fetchRequest()
                doomed.predicate = NSPredicate(format: "id IN %@", Array(gone))
                for note in try other.fetch(doomed) { other.delete(note) }
                try other.save()
            }
            #expect(results.count == 60)
            for position in 0..<60 {
                let id = Int32(ascending ? position + 1 : 60 - position)
                let note = results[position]
                if gone.contains(id) {
                    #expect(note.isFault, "position \(position)")
                } else {
                    #expect(!note.isFault && note.id == id && note.text1 == "note \(id)", "position \(position)")
                }
            }
            #expect(results.loadError == nil)
        }
    }

    @Test func aBatchThatCannotBeReadIsReportedNotSwallowed() throws {
        let (stack, context) = try seeded(.sqlite, count: 300)
        let coordinator = stack.container.persistentStoreCoordinator
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.fetchBatchSize = 100
            let results = try context.fetchBatched(request)
            _ = results[0]
            #expect(results.loadError == nil)
            try coordinator.remove(coordinator.persistentStores[0])
            let fault = results[250]   // the third batch: the store is gone
            #expect(fault.isFault)
            #expect(results.loadError != nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchedResultsIncludePendingChanges(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind, count: 20)
        try context.performAndWait { () throws in
            let extra = Note(context: context)
            extra.id = 100
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id >= 19")
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            request.fetchBatchSize = 1
            #expect(try context.fetchBatched(request).map(\.id) == [19, 20, 100])
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func withoutPropertyValuesObjectsComeBackAsFaults(kind: StoreKind) throws {
        let (stack, context) = try seeded(kind, count: 5)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.includesPropertyValues = false
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let notes = try context.fetch(request)
            #expect(notes.count == 5)
            let allFaults = notes.allSatisfy { $0.isFault }
            #expect(allFaults)
            #expect(notes.map(\.id) == [1, 2, 3, 4, 5])
        }
        _ = stack
    }
}
