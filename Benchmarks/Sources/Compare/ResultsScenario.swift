import Foundation
import OpenCoreData
import Synchronization

/// Live results: 10,000 notes in 50 sections shown by a fetched results controller while
/// another context saves 100 changes at a time (a third move within their section, a third to
/// another section, a third change a column nobody sorts by), merged into the controller's
/// context. Ours: the controller's update — the merge with a controller, less the same merge into
/// a context without one. The peer: what an app without a controller writes — fetch the request
/// again and diff the object IDs with Swift's `difference(from:)`. The goal: ours ≤ 20 % of the
/// peer. Then the delay from the other context's `save()` returning to the delegate's
/// `controllerDidChangeContent` with automatic merges (p50 / p99; goal p99 < 5 ms).
enum ResultsScenario {
    final class Watcher: FetchedResultsControllerDelegate {
        let changed = Mutex<UInt64>(0)
        func controllerDidChangeContent(_ controller: AnyFetchedResultsController) {
            changed.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
        }
    }

    /// The did-save notification, posted on the writer's queue while this thread waits for it
    /// (performAndWait), read after: one thread at a time.
    final class SavedNotification: @unchecked Sendable {
        var value: Notification?
    }

    static func run(count: Int = 10_000, sections: Int = 50, changes: Int = 100, rounds: Int = 40) throws -> [Result] {
        let container = PersistentContainer(name: "Results", managedObjectModel: ManagedObjectModel(Note.self))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: scratchFile("results.sqlite"))]
        try container.loadPersistentStores()
        let writer = container.newBackgroundContext()
        let ids = try writer.performAndWait { () throws in
            let notes = (0..<count).map { index in
                let note = Note(context: writer)
                note.id = Int32(index)
                note.text1 = String(format: "s%02d", index % sections)
                return note
            }
            try writer.save()
            return notes.map(\.objectID)
        }
        let request = Note.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "text1", ascending: true), NSSortDescriptor(key: "id", ascending: true)]

        let watched = container.newBackgroundContext()
        let plain = container.newBackgroundContext()
        let watcher = Watcher()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: watched, sectionNameKeyPath: "text1", cacheName: nil)
        controller.delegate = watcher
        try watched.performAndWait { try controller.performFetch() }
        var held = try plain.performAndWait { try plain.fetch(request) }
        var previous = plain.performAndWait { held.map(ObjectIdentifier.init) }

        var random = SystemRandomNumberGenerator()
        var savedAt: UInt64 = 0
        func saveChanges() throws -> Notification? {
            let saved = SavedNotification()
            let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { saved.value = $0 }
            defer { NotificationCenter.default.removeObserver(observer) }
            try writer.performAndWait { () throws in
                for change in 0..<changes {
                    let note = writer.object(with: ids.randomElement(using: &random)!) as! Note
                    switch change % 3 {
                    case 0: note.id = Int32.random(in: 0..<Int32(count), using: &random)
                    case 1: note.text1 = String(format: "s%02d", Int.random(in: 0..<sections, using: &random))
                    default: note.text2 = "changed \(change)"
                    }
                }
                try writer.save()
                savedAt = DispatchTime.now().uptimeNanoseconds
                writer.reset()
            }
            return saved.value
        }

        var withController: [Double] = [], without: [Double] = [], refetch: [Double] = []
        for _ in 0..<rounds {
            guard let notification = try saveChanges() else { continue }
            withController.append(watched.performAndWait { measure { watched.mergeChanges(fromContextDidSave: notification) } })
            without.append(plain.performAndWait { measure { plain.mergeChanges(fromContextDidSave: notification) } })
            refetch.append(try plain.performAndWait { () throws in
                try measure {
                    held = try plain.fetch(request)
                    let current = held.map(ObjectIdentifier.init)
                    let difference = current.difference(from: previous)
                    precondition(difference.insertions.count == difference.removals.count)
                    previous = current
                }
            })
        }
        let update = max(0, median(withController) - median(without))

        // Delay from save() returning to controllerDidChangeContent, merged automatically.
        watched.automaticallyMergesChangesFromParent = true
        var delays: [Double] = []
        for _ in 0..<rounds * 5 {
            let before = watcher.changed.withLock { $0 }
            _ = try saveChanges()
            let returned = savedAt
            var changedAt = before
            while changedAt == before {
                Thread.sleep(forTimeInterval: 0.0002)
                changedAt = watcher.changed.withLock { $0 }
            }
            delays.append(Double(Int64(changedAt) - Int64(returned)) / 1_000_000)
        }
        watched.automaticallyMergesChangesFromParent = false
        let sorted = delays.sorted()
        let ok = watched.performAndWait { controller.fetchedObjects?.count == count }
        precondition(ok, "the controller lost objects")
        return [
            try observationCost(container, request: request),
            Result(scenario: "controller update: 100 changes in 10k/50 sec.", n: count, ours: update, raw: median(refetch), grdb: nil,
                   extra: ["merge_with_controller_ms": median(withController), "merge_alone_ms": median(without)]),
            Result(scenario: "save() → controllerDidChangeContent", n: changes, ours: sorted[sorted.count / 2], raw: nil, grdb: nil,
                   extra: ["p99_ms": sorted[min(sorted.count - 1, sorted.count * 99 / 100)], "max_ms": sorted.last ?? 0]),
        ]
    }

    /// The price of Observation: fetching the notes and reading every attribute in a context that
    /// makes its objects observable (a registrar per object, every read recorded), against the
    /// same in one that does not (`extra`: both, and their ratio). A fresh context each run.
    static func observationCost(_ container: PersistentContainer, request: FetchRequest<Note>, runs: Int = 9) throws -> Result {
        func fetchAndRead(observable: Bool) throws -> Double {
            let context = container.newBackgroundContext()
            return try context.performAndWait { () throws in
                context.makesObjectsObservable = observable
                return try measure {
                    var length = 0
                    for note in try context.fetch(request) {
                        length &+= Int(note.id) &+ (note.text1?.utf8.count ?? 0) &+ (note.text2?.utf8.count ?? 0) &+ (note.text3?.utf8.count ?? 0)
                    }
                    precondition(length != 0)
                }
            }
        }
        var observable: [Double] = [], plain: [Double] = []
        for _ in 0..<runs {
            plain.append(try fetchAndRead(observable: false))
            observable.append(try fetchAndRead(observable: true))
        }
        let on = median(observable), off = median(plain)
        return Result(scenario: "fetch 10k + read all, observable context", n: 10_000, ours: on, raw: nil, grdb: nil,
                      extra: ["not_observable_ms": off, "observable_over_not": on / off])
    }
}