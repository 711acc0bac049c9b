import Foundation
import OpenCoreData
import Testing
import TestSupport

/// An importer written as SwiftData users write a `@ModelActor`.
@ContextActor
actor NoteImporter {
    /// Inserts notes and saves, without `perform`: the actor runs on its context's queue.
    func importNotes(_ ids: Range<Int>) throws -> Int {
        for id in ids { Note(context: managedObjectContext).id = Int32(id) }
        try managedObjectContext.save()
        return try managedObjectContext.count(for: Note.fetchRequest())
    }

    /// Whether the actor's code runs on its context's queue (and pending changes are processed
    /// between its jobs, as between `perform` blocks).
    func onItsQueue() -> Bool { managedObjectContext.queue.isCurrent }

    /// Changes a note, awaits (the method's second job), and reports what the context saw.
    func changeAcrossAnAwait() async throws -> (hadUnprocessed: Bool, updated: Int) {
        let note = try managedObjectContext.fetch(Note.fetchRequest()).first
        note?.text1 = "changed"
        await Task.yield()
        return (managedObjectContext.hasChanges, managedObjectContext.updatedObjects.count)
    }
}

@Suite(.dedicatedThread) struct ContextActorTests {
    @Test func aContextActorRunsOnItsContextsQueue() async throws {
        let stack = try TestStack(.sqlite)
        let importer = NoteImporter(container: stack.container)
        #expect(try await importer.importNotes(0..<5) == 5)
        #expect(await importer.onItsQueue())
        #expect(!importer.managedObjectContext.queue.isCurrent)
        let (hasChanges, updated) = try await importer.changeAcrossAnAwait()
        #expect(hasChanges && updated == 1)
        // Its objects are the context's: another context sees the saves.
        let reader = stack.container.newBackgroundContext()
        #expect(try await reader.perform { try reader.count(for: Note.fetchRequest()) } == 5)
        // Several calls from many tasks run one at a time, on the queue.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for start in stride(from: 100, to: 500, by: 100) {
                group.addTask { try await importer.importNotes(start..<(start + 10)) }
            }
            var last = 0
            for try await count in group { last = max(last, count) }
            #expect(last == 45)
        }
    }

    @Test func anActorOnAGivenContextSharesItsObjects() async throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        let importer = NoteImporter(context: context)
        #expect(importer.managedObjectContext === context)
        #expect(try await importer.importNotes(0..<3) == 3)
        #expect(try context.performAndWait { try context.count(for: Note.fetchRequest()) } == 3)
    }
}
