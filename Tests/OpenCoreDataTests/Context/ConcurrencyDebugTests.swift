import OpenCoreData
import Testing
import TestSupport

/// Concurrency debugging traps run in child processes (exit tests).
@Suite(.dedicatedThread) struct ConcurrencyDebugTests {
    @Test func usingAnObjectOffItsQueueTrapsNamingObjectContextAndThread() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ConcurrencyDebug.isEnabled = true
            let stack = try TestStack(.inMemory)
            let context = stack.container.newBackgroundContext()
            context.name = "importer"
            let note = context.performAndWait { Note(context: context) }
            _ = note.text1                                 // off the context's queue
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("Concurrency violation"))
        #expect(message.contains("x-coredata:///Note/t"))
        #expect(message.contains("'importer'"))
        #expect(message.contains("thread"))
    }

    @Test func callingAContextOffItsQueueTraps() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ConcurrencyDebug.isEnabled = true
            let stack = try TestStack(.inMemory)
            let context = stack.container.newBackgroundContext()
            _ = try context.fetch(Note.fetchRequest())
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("fetch(_:) was called on context"))
    }

    @Test func theEnvironmentVariableTurnsTheChecksOn() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("OPENCOREDATA_CONCURRENCY_DEBUG", "1", 1)
            let stack = try TestStack(.inMemory)
            let context = stack.container.newBackgroundContext()
            context.insert(Note(entity: stack.container.managedObjectModel.entitiesByName["Note"]!, insertInto: nil))
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("Concurrency violation"))
    }

    @Test func correctUseNeverTraps() async {
        await #expect(processExitsWith: .success) {
            ConcurrencyDebug.isEnabled = true
            let stack = try TestStack(.sqlite)
            let context = stack.container.newBackgroundContext()
            try context.performAndWait { () throws in
                let note = Note(context: context)
                note.text1 = "fine"
                try context.save()
                _ = try context.fetch(Note.fetchRequest()).map(\.text1)
            }
            let count = try await context.perform { try context.count(for: Note.fetchRequest()) }
            let viewCount = try await stack.container.viewContext.perform { try stack.container.viewContext.count(for: Note.fetchRequest()) }
            guard count == 1, viewCount == 1 else { exit(2) }
        }
    }
}
