import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ResultStreamTests {
    private func request() -> FetchRequest<Note> {
        let request = Note.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "text1", ascending: true), NSSortDescriptor(key: "id", ascending: true)]
        return request
    }

    /// Keeps the context's queue busy until `release` is signalled (the block is queued, not awaited).
    private func occupy(_ context: ManagedObjectContext, until release: DispatchSemaphore) {
        context.perform { release.wait() }
    }

    @Test func theFirstResultsThenEveryChangeMergedFromAnotherContext() async throws {
        let stack = try TestStack(.sqlite)
        let viewContext = stack.container.viewContext
        viewContext.automaticallyMergesChangesFromParent = true
        let writer = stack.container.newBackgroundContext()
        try await writer.perform {
            let note = Note(context: writer)
            note.id = 1
            note.text1 = "a"
            try writer.save()
        }
        var iterator = viewContext.results(for: request(), sectionNameKeyPath: "text1").makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.sectionIdentifiers == ["a"])
        #expect(first.numberOfItems == 1)

        try await writer.perform {
            let note = Note(context: writer)
            note.id = 2
            note.text1 = "b"
            try writer.save()
        }
        let second = try #require(try await iterator.next())
        #expect(second.sectionIdentifiers == ["a", "b"])
        let ids = try await viewContext.perform { try viewContext.fetch(self.request()).map(\.objectID) }
        #expect(second.itemIdentifiers == ids)
    }

    @Test func valuesMadeOnTheContextsQueueFollowLocalEdits() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        var iterator = context.results(for: request(), map: { "\($0.id)" }).makeAsyncIterator()
        #expect(try await iterator.next() == [])
        await context.perform {
            let note = Note(context: context)
            note.id = 7
            note.text1 = "z"
        }                                                    // perform ends the event
        #expect(try await iterator.next() == ["7"])
    }

    @Test func aBadRequestEndsTheSequenceWithItsError() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        var iterator = context.results(for: Note.fetchRequest()).makeAsyncIterator()   // no sort descriptor
        await #expect(throws: CoreDataError.self) { _ = try await iterator.next() }
    }

    @Test func endingTheLoopStopsFollowingTheContext() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        do {
            for try await snapshot in context.results(for: request()) {
                #expect(snapshot.numberOfItems == 0)
                break
            }
        }
        // The stop is queued on the context's queue; a later block runs after it.
        let stopped = await eventually { await context.perform { !context.hasGraphObservers } }
        #expect(stopped)
    }

    /// A sequence that ends before the context's queue gets to start it (dropped unread while the
    /// queue is busy) does not leave results following the context.
    @Test func aSequenceDroppedBeforeItStartsDoesNotFollowTheContext() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let release = DispatchSemaphore(value: 0)
        occupy(context, until: release)
        do {
            let stream = context.results(for: request())
            _ = stream                                       // dropped here: the stream ends
        }
        release.signal()
        let stopped = await eventually { await context.perform { !context.hasGraphObservers } }
        #expect(stopped)
    }
}
