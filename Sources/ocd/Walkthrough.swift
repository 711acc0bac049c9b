import Dispatch
import Foundation
import OpenCoreData
import Synchronization

/// The steps of `ocd demo`, each printing what happens and on which thread.
struct Walkthrough: Sendable {
    let container: PersistentContainer
    let threads = ThreadLabels()

    private func section(_ title: String) {
        print("== \(title)")
    }

    /// `perform` enqueues and returns; `performAndWait` waits behind it, then runs on the caller.
    func performVersusPerformAndWait() {
        section("perform vs performAndWait")
        threads.name("caller")
        let context = container.newBackgroundContext()
        context.name = "background"
        let log = Log()
        context.perform { [threads] in
            Thread.sleep(forTimeInterval: 0.05)
            log.add("perform block 1 ran on \(threads.current())")
        }
        log.add("perform returned at once on \(threads.current())")
        context.perform { [threads] in log.add("perform block 2 ran on \(threads.current())") }
        context.performAndWait { log.add("performAndWait ran after the queued blocks, on \(threads.current())") }
        log.add("performAndWait returned")
        log.print()
    }

    /// Nested calls: `performAndWait` inside `perform` runs inline; `perform` inside enqueues.
    func nestedCalls() {
        section("nested calls")
        let context = container.newBackgroundContext()
        let log = Log()
        let done = DispatchSemaphore(value: 0)
        context.perform { [threads] in
            log.add("outer perform on \(threads.current())")
            context.performAndWait { log.add("  nested performAndWait runs inline, on \(threads.current())") }
            context.perform {
                log.add("  nested perform runs after the outer block, on \(threads.current())")
                done.signal()
            }
            log.add("outer perform ends")
        }
        done.wait()
        let value = context.performAndWait { context.performAndWait { 42 } }
        log.add("performAndWait inside performAndWait returned \(value) without deadlock")
        log.print()
    }

    /// `performBackgroundTask` makes a new context for every call.
    func backgroundTasks() {
        section("performBackgroundTask")
        let log = Log()
        let group = DispatchGroup()
        let contexts = Mutex<Set<ObjectIdentifier>>([])
        for index in 1...3 {
            group.enter()
            container.performBackgroundTask { [threads] context in
                contexts.withLock { _ = $0.insert(ObjectIdentifier(context)) }
                let note = Note(context: context)
                note.id = Int32(1000 + index)
                note.text1 = "from task \(index)"
                do {
                    try context.save()
                    log.add("task \(index): saved note \(note.id) on \(threads.current()) as \(note.objectID)")
                } catch {
                    log.add("task \(index): save failed: \(error)")
                }
                group.leave()
            }
        }
        group.wait()
        log.add("3 calls used \(contexts.withLock { $0.count }) different contexts")
        log.print()
    }

    /// Insert, save and fetch on a private-queue context, plus what the file looks like.
    func saveAndFetch() throws {
        section("save and fetch")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for id in 1...5 {
                let note = Note(context: context)
                note.id = Int32(id * 100)
                note.text1 = "note \(id)"
            }
            print("""
                inserted 5 notes; hasChanges = \(context.hasChanges), IDs temporary = \
                \(context.insertedObjects.allSatisfy(\.objectID.isTemporaryID))
                """)
            try context.save()
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id >= %d AND id < %d", 100, 1000)
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let notes = try context.fetch(request)
            for note in notes { print("  \(note.id) \(note.text1 ?? "(nil)")  \(note.objectID)") }
            notes[0].text2 = "edited"
            try context.save()
            print("edited note \(notes[0].id); committed text2 = \(notes[0].committedValues(forKeys: ["text2"])["text2"] ?? "nil")")
            let bad = Note.fetchRequest()
            bad.predicate = NSPredicate(format: "id == == 3")
            do { _ = try context.fetch(bad) } catch { print("malformed predicate → \(error)") }
        }
    }

    /// `try await context.perform { … }` returns a Sendable value.
    func asyncPerform() async throws {
        section("async perform")
        let context = container.newBackgroundContext()
        let count = try await context.perform { try context.count(for: Note.fetchRequest()) }
        print("count(for:) through async perform: \(count)")
    }

    /// The view context runs on the main queue, serviced by the async main.
    func viewContextOnMainQueue() async throws {
        section("view context")
        let viewContext = container.viewContext
        let ids = try await viewContext.perform { [threads] in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: false)]
            request.fetchLimit = 3
            let notes = try viewContext.fetch(request)
            print("viewContext fetched \(notes.map(\.id)) on \(threads.current()) (the main queue)")
            return notes.map(\.objectID)
        }
        print("object IDs are Sendable and crossed back to the caller: \(ids.count)")
    }
}

/// Lines collected from several threads, printed in the order they happened.
final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    func print() {
        for (index, line) in lines.withLock({ $0 }).enumerated() { Swift.print("  \(index + 1). \(line)") }
    }
}
