import Dispatch
import Foundation
import OpenCoreData
import Testing
import TestSupport

/// The library's `async` entry points suspend while they wait for a context's queue (and so for
/// whatever the block waits on there: the store's writer, a PostgreSQL answer); they never block
/// the thread of the task that awaits them. A Swift server calls them from the cooperative pool,
/// which has a thread per core: one blocking call there stalls every other task.
///
/// Shown on a pool of one thread: while another thread holds a context's queue, more tasks than
/// the machine has cores each await the library on that one thread. Every task reaches its
/// `await` only if each task before it handed the thread back instead of waiting on it; a call
/// that blocked would leave the others unstarted until the holder gave up (30 s).
@Suite(.dedicatedThread) struct CooperativePoolTests {
    static let tasks = 2 * ProcessInfo.processInfo.activeProcessorCount + 2

    /// Holds `context`'s queue from a thread of its own until every task has arrived at its
    /// `await` (or 30 s passed), while `tasks` tasks on one thread call `operation`. Returns how
    /// many had arrived while the queue was held, and what the operations returned.
    func awaitOnOneThread(holding context: ManagedObjectContext,
                          _ operation: @escaping @Sendable (Int) async throws -> Int) async throws -> (arrived: Int, results: [Int]) {
        let tasks = Self.tasks
        let arrived = Recorder<Int>()
        let arrivedWhileHeld = Recorder<Int>()
        let holding = DispatchSemaphore(value: 0)
        Thread {
            // A main-queue context's block runs on the main thread, which it holds meanwhile.
            context.performAndWait {
                holding.signal()
                let deadline = Date().addingTimeInterval(30)
                while arrived.values.count < tasks && Date() < deadline { usleep(1_000) }
                arrivedWhileHeld.append(arrived.values.count)
            }
        }.start()
        holding.waitOrRecord()
        let onePool = DedicatedThreadExecutor(name: "one-thread pool")
        defer { onePool.finish() }
        let results = try await withTaskExecutorPreference(onePool) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<tasks {
                    group.addTask {
                        arrived.append(index)
                        return try await operation(index)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        return (arrivedWhileHeld.values.first ?? 0, results.sorted())
    }

    @Test(arguments: StoreKind.allCases)
    func performSuspendsWhileTheQueueIsBusyAndTheStoreWrites(kind: StoreKind) async throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let (arrived, results) = try await awaitOnOneThread(holding: context) { index in
            try await context.perform {
                let note = Note(context: context)
                note.id = Int32(index)
                try context.save()
                return index
            }
        }
        #expect(arrived == Self.tasks)
        #expect(results == Array(0..<Self.tasks))
        let reader = stack.container.newBackgroundContext()
        #expect(try await reader.perform { try reader.count(for: Note.fetchRequest()) } == Self.tasks)
    }

    @Test func enqueuedPerformSuspends() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let (arrived, results) = try await awaitOnOneThread(holding: context) { index in
            await context.perform(schedule: .enqueued) { index }
        }
        #expect(arrived == Self.tasks)
        #expect(results == Array(0..<Self.tasks))
    }

    @Test func performOnTheMainQueueContextSuspends() async throws {
        let stack = try TestStack(.sqlite)
        let viewContext = stack.container.viewContext
        let (arrived, results) = try await awaitOnOneThread(holding: viewContext) { index in
            await viewContext.perform { index }
        }
        #expect(arrived == Self.tasks)
        #expect(results == Array(0..<Self.tasks))
    }

    @Test func aContextActorsMethodsSuspendWhileItsQueueIsBusy() async throws {
        let stack = try TestStack(.sqlite)
        let importer = NoteImporter(context: stack.container.newBackgroundContext())
        let (arrived, results) = try await awaitOnOneThread(holding: importer.managedObjectContext) { index in
            try await importer.importNotes(index..<(index + 1))
        }
        #expect(arrived == Self.tasks)
        // Each call saw the notes of the calls before it: the counts are 1 through `tasks`.
        #expect(results == Array(1...Self.tasks))
    }
}
