import Dispatch
import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct PerformTests {
    typealias Kind = ManagedObjectContext.ConcurrencyType

    @Test func performIsAsynchronousFIFOAndPerformAndWaitWaitsBehindIt() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let order = Recorder<Int>()
        let gate = DispatchSemaphore(value: 0)
        context.perform { gate.waitOrRecord() }              // hold the queue so the next blocks queue up
        for i in 0..<100 { context.perform { order.append(i) } }
        order.append(-1)                             // perform returned before any block ran
        gate.signal()
        let seen = context.performAndWait { order.values }
        #expect(seen == [-1] + Array(0..<100))
    }

    @Test func performRunsOnTheQueueAndPerformAndWaitOnTheCallingThread() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let caller = currentThreadID()
        let performThread = Recorder<UInt>()
        let done = DispatchSemaphore(value: 0)
        context.perform {
            performThread.append(currentThreadID())
            done.signal()
        }
        done.waitOrRecord()
        let waitThread = context.performAndWait { currentThreadID() }
        #expect(waitThread == caller)
        #expect(performThread.values == [performThread.values[0]])
        #expect(performThread.values[0] != caller)
    }

    @Test func nestedCallsNeverDeadlockAndNestedPerformRunsAfterTheOuterBlock() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let events = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        context.perform {
            events.append("outer start")
            let inner = context.performAndWait { context.performAndWait { "nested value" } }
            events.append(inner)
            context.perform {
                events.append("nested perform")
                done.signal()
            }
            events.append("outer end")
        }
        done.waitOrRecord()
        #expect(events.values == ["outer start", "nested value", "outer end", "nested perform"])
    }

    @Test func performAndWaitReturnsTheValueAndRethrows() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        struct Boom: Error {}
        #expect(context.performAndWait { 7 * 6 } == 42)
        #expect(throws: Boom.self) { try context.performAndWait { throw Boom() } }
    }

    @Test func asyncPerformReturnsSendableValuesInQueueOrder() async throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        let order = Recorder<String>()
        enqueue(context) { order.append("queued first") }
        let count = try await context.perform(schedule: .enqueued) { () throws -> Int in
            order.append("async block")
            let note = Note(context: context)
            note.id = 1
            try context.save()
            return try context.count(for: Note.fetchRequest())
        }
        #expect(count == 1)
        #expect(order.values == ["queued first", "async block"])
        let immediate = await context.perform { 5 }
        #expect(immediate == 5)
    }

    @Test func asyncPerformPropagatesTheBlocksError() async throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        await #expect(throws: CoreDataError.self) {
            try await context.perform {
                let request = Note.fetchRequest()
                request.predicate = NSPredicate(format: "nope == 1")
                return try context.fetch(request).count
            }
        }
    }

    @Test func viewContextRunsItsBlocksOnTheMainQueue() async throws {
        let stack = try TestStack(.inMemory)
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let viewContext = stack.container.viewContext
        #expect(viewContext.concurrencyType == .mainQueue)
        let queueName = await viewContext.perform { DispatchQueue.getSpecific(key: key) }
        #expect(queueName == "main")
        // performAndWait from another thread waits for the main queue without blocking it.
        let fromBackground = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: viewContext.performAndWait { DispatchQueue.getSpecific(key: key) })
            }
        }
        #expect(fromBackground == "main")
    }

    @Test func performBackgroundTaskMakesANewContextPerCall() async throws {
        let stack = try TestStack(.sqlite)
        let contexts = Recorder<ManagedObjectContext>()      // kept alive: identities stay distinct
        let group = DispatchGroup()
        for i in 0..<3 {
            group.enter()
            enqueueBackgroundTask(stack.container) { context in
                contexts.append(context)
                let note = Note(context: context)
                note.id = Int32(i)
                do { try context.save() } catch { Issue.record("the save failed: \(error)") }
                group.leave()
            }
        }
        group.waitOrRecord()
        #expect(Set(contexts.values.map(ObjectIdentifier.init)).count == 3)
        let total = try await stack.container.performBackgroundTask { context in
            contexts.append(context)
            return try context.count(for: Note.fetchRequest())
        }
        #expect(total == 3)
        #expect(Set(contexts.values.map(ObjectIdentifier.init)).count == 4)
    }

    @Test func performCallsProcessPendingChangesAfterTheBlock() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let inserted = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { note in
            inserted.append((note.userInfo?[NSInsertedObjectsKey] as? Set<ManagedObject>)?.count ?? -1)
            done.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        context.perform {
            _ = Note(context: context)
            _ = Note(context: context)
        }
        done.waitOrRecord()
        #expect(inserted.values == [2])
    }

    @Test func aContextHasEitherAParentOrACoordinator() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = ManagedObjectModel(entities: [EntityDescription(name: "Thing")])
            let parent = ManagedObjectContext(concurrencyType: .privateQueue)
            let child = ManagedObjectContext(concurrencyType: .privateQueue)
            child.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
            child.parent = parent
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("either a parent or a persistent store coordinator"))
    }

    /// Every pairing of main- and private-queue parent and child, each side calling
    /// `performAndWait` on the other from inside its own queue at the same time (the child
    /// reading through its parent, the parent looking into its child), under a watchdog: a
    /// deadlock fails the test instead of hanging the run.
    @Test(arguments: [(Kind.mainQueue, Kind.privateQueue), (Kind.privateQueue, Kind.mainQueue), (Kind.privateQueue, Kind.privateQueue), (Kind.mainQueue, Kind.mainQueue)])
    func performAndWaitAcrossParentAndChildNeverDeadlocks(parentType: Kind, childType: Kind) throws {
        let stack = try TestStack(.sqlite)
        let parent = ManagedObjectContext(concurrencyType: parentType)
        parent.persistentStoreCoordinator = stack.container.persistentStoreCoordinator
        let child = ManagedObjectContext(concurrencyType: childType)
        child.parent = parent
        try parent.performAndWait { () throws in
            Note(context: parent).text1 = "seed"
            try parent.save()
        }
        let rounds = 200
        let counts = Recorder<Int>()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            for _ in 0..<rounds {
                // Child first, then (to read) its parent.
                let count = child.performAndWait { (try? child.count(for: Note.fetchRequest())) ?? -1 }
                counts.append(count)
            }
        }
        DispatchQueue.global().async(group: group) {
            for _ in 0..<rounds {
                // Parent first, then its child.
                parent.performAndWait { child.performAndWait { _ = child.registeredObjects.count } }
            }
        }
        DispatchQueue.global().async(group: group) {
            for _ in 0..<rounds {
                let done = DispatchSemaphore(value: 0)
                parent.perform {
                    child.performAndWait { _ = try? child.fetch(Note.fetchRequest()) }
                    done.signal()
                }
                done.waitOrRecord()
            }
        }
        let finished = group.wait(timeout: .now() + 60) == .success
        #expect(finished, "performAndWait between a \(parentType) parent and a \(childType) child deadlocked")
        if finished { #expect(counts.values == Array(repeating: 1, count: rounds)) }
    }
}
