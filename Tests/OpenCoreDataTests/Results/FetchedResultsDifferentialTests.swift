import Foundation
import OpenCoreData
import Testing
import TestSupport

/// The controller against a fresh fetch: seeded random change sets — inserts, deletes, updates
/// that move objects across sort and section boundaries, saves, rollbacks, refreshes, undo,
/// resets, and another context's saves merged in (objects this context never registered among
/// them) — and after each, the delegate's reported changes applied to the previous results must
/// give exactly what a fresh fetch gives, sections included; `fetchedObjects` too.
///
/// `OCD_RESULTS_SEEDS` sets how many seeds run (each 40 change sets; default 150) and
/// `OCD_RESULTS_SEED` replays one.
@Suite(.dedicatedThread(minutes: 15)) struct FetchedResultsDifferentialTests {
    static let sectionNames: [String?] = [nil, "a", "b", "c"]
    static let predicates: [String?] = [nil, "id >= 4", "text2 != nil", "id < 8 AND text1 != 'c'"]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    @Test func reportedChangesReproduceAFreshFetch() throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64] = environment["OCD_RESULTS_SEED"].flatMap(UInt64.init).map { [$0] }
            ?? (1...UInt64(environment["OCD_RESULTS_SEEDS"].flatMap(Int.init) ?? 150)).map { $0 }
        for seed in seeds {
            try run(seed: seed)
        }
    }

    private func run(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let stack = try TestStack(seed % 3 == 0 ? .inMemory : .sqlite)
        let context = stack.container.newBackgroundContext()
        let other = stack.container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        other.mergePolicy = .mergeByPropertyObjectTrump
        let automatic = Bool.random(using: &random)
        context.automaticallyMergesChangesFromParent = automatic

        let request = Note.fetchRequest()
        request.predicate = Self.predicates.randomElement(using: &random)!.map { FetchPredicate(format: $0) }
        let sectioned = Bool.random(using: &random)
        var sort = [NSSortDescriptor(key: "text1", ascending: Bool.random(using: &random))]
        sort.append(NSSortDescriptor(key: "id", ascending: Bool.random(using: &random)))
        if Bool.random(using: &random) { sort.append(NSSortDescriptor(key: "text2", ascending: true)) }
        request.sortDescriptors = sort
        if random.next() % 6 == 0 { request.fetchLimit = 5 }
        let shadow = ResultsShadow()
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                  sectionNameKeyPath: sectioned ? "text1" : nil, cacheName: nil)
        controller.delegate = shadow
        let saves = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saves.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }

        func describe() -> String {
            "seed \(seed) (predicate \(request.predicate.map { "\($0)" } ?? "none"), sort \(sort), sections \(sectioned), limit \(request.fetchLimit), automatic merges \(automatic))"
        }
        func check(_ step: Int, _ operation: String) throws {
            let fresh = try context.fetch(request)
            let expected = sectioned ? ResultsShadow.sections(of: fresh) { ($0 as? Note)?.text1 ?? "" }
                : [ResultsShadow.Section(name: "", objects: fresh.map(ObjectIdentifier.init))]
            let objects = controller.fetchedObjects?.map(ObjectIdentifier.init)
            guard shadow.problems.isEmpty, shadow.sections == expected, objects == fresh.map(ObjectIdentifier.init) else {
                let ids = { (objects: [Note]) in objects.map { "\($0.id)/\($0.text1 ?? "nil")" }.joined(separator: " ") }
                throw Failure(description: "\(describe()), step \(step) (\(operation)): problems \(shadow.problems); fresh [\(ids(fresh))], controller [\(ids(controller.fetchedObjects ?? []))]; shadow sections \(shadow.sections.map { "\($0.name):\($0.objects.count)" }), expected \(expected.map { "\($0.name):\($0.objects.count)" })")
            }
        }

        try context.performAndWait { () throws in
            context.undoManager = ContextUndoManager()
            for id in 0..<6 { insert(Int32(id), in: context, random: &random) }
            try context.save()
            try controller.performFetch()
            shadow.load(from: controller)
            try check(0, "performFetch")
        }
        for step in 1...40 {
            let choice = Int(random.next() % 100)
            if choice >= 85 {
                // Another context saves; the change reaches this one by a merge.
                try other.performAndWait { () throws in
                    let notes = try other.fetch(Note.fetchRequest())
                    for _ in 0..<Int(random.next() % 3 + 1) {
                        let kind = random.next() % 3
                        if kind == 0 || notes.isEmpty { insert(Int32(random.next() % 12), in: other, random: &random) }
                        else if kind == 1 { change(notes.randomElement(using: &random)!, random: &random) }
                        else { other.delete(notes.randomElement(using: &random)!) }
                    }
                    try other.save()
                }
                let notification = saves.values.last
                try context.performAndWait { () throws in
                    if !automatic, let notification { context.mergeChanges(fromContextDidSave: notification) }
                    try check(step, "merge")
                }
                continue
            }
            try context.performAndWait { () throws in
                let notes = try context.fetch(Note.fetchRequest())
                let operation: String
                switch choice {
                case 0..<18: insert(Int32(random.next() % 12), in: context, random: &random); operation = "insert"
                case 18..<50 where !notes.isEmpty: change(notes.randomElement(using: &random)!, random: &random); operation = "change"
                case 50..<60 where !notes.isEmpty: context.delete(notes.randomElement(using: &random)!); operation = "delete"
                case 60..<68:
                    do { try context.save() } catch { context.rollback() }
                    operation = "save"
                case 68..<72: context.rollback(); operation = "rollback"
                case 72..<77 where !notes.isEmpty:
                    context.refresh(notes.randomElement(using: &random)!, mergeChanges: Bool.random(using: &random)); operation = "refresh"
                case 77..<82: context.undo(); operation = "undo"
                case 82..<83: context.reset(); operation = "reset"
                case 83..<85: context.refreshAllObjects(); operation = "refreshAllObjects"
                default: insert(Int32(random.next() % 12), in: context, random: &random); operation = "insert"
                }
                context.processPendingChanges()
                try check(step, operation)
            }
        }
        // Merges queued on the context's queue (automatic merges) run before this block.
        try context.performAndWait { try check(41, "final") }
    }

    private func insert(_ id: Int32, in context: ManagedObjectContext, random: inout SeededGenerator) {
        let note = Note(context: context)
        note.id = id
        note.text1 = Self.sectionNames.randomElement(using: &random)!
        note.text2 = Bool.random(using: &random) ? "x\(random.next() % 3)" : nil
    }

    private func change(_ note: Note, random: inout SeededGenerator) {
        switch random.next() % 3 {
        case 0: note.id = Int32(random.next() % 12)
        case 1: note.text1 = Self.sectionNames.randomElement(using: &random)!
        default: note.text2 = Bool.random(using: &random) ? "x\(random.next() % 3)" : nil
        }
    }
}
