import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Long random sequences of operations on four contexts — two on the coordinator, a child of the
/// first and a grandchild — over probes and the labels they point at (a to-one with a to-many inverse, a
/// many-to-many in a join table): insert, change an attribute, set the to-one, add or remove a
/// member, delete, save, merge another context's save, refresh, undo and redo, rollback and reset. After every
/// step the graph's invariants hold in every context (`invariantViolations()`), and after every
/// save the store holds exactly what a plain model of the acknowledged saves says.
///
/// The model knows each context's unsaved changes property by property. A save to the store
/// either applies them (to rows that still exist: a row deleted elsewhere stays deleted) or fails
/// with a merge conflict (133020, the default policy) and changes nothing, after which the test
/// rolls the context back; a child's save hands its changes to its parent's.
///
/// `OCD_RANDOM_GRAPH_SEED` replays a seed; `OCD_RANDOM_GRAPH_STEPS` sets the length of a run.
@Suite(.dedicatedThread(minutes: 15)) struct RandomGraphOperationTests {
    static let labelNames = ["red", "green", "blue", "grey"]
    static let titles = ["", "a", "b", "é", "long title"]

    /// A context's unsaved change to one probe (by code), property by property.
    struct Change {
        var inserted = false
        var deleted = false
        var title: String?
        var owner: String??
        var added: Set<String> = []
        var removed: Set<String> = []

        /// Applies `later` (made on top of this one, as a child's change lands on its parent's).
        mutating func absorb(_ later: Change) {
            inserted = inserted || later.inserted
            deleted = deleted || later.deleted
            if let title = later.title { self.title = title }
            if let owner = later.owner { self.owner = owner }
            for label in later.added { if removed.remove(label) == nil { added.insert(label) } }
            for label in later.removed { if added.remove(label) == nil { removed.insert(label) } }
        }
    }

    /// What the store holds for one probe.
    struct Row: Equatable, CustomStringConvertible {
        var title: String
        var owner: String?
        var labels: Set<String>
        var description: String { "(\(title.debugDescription), owner: \(owner ?? "nil"), labels: \(labels.sorted()))" }
    }

    /// One context and its unsaved changes as the model knows them.
    final class Player {
        let name: String
        let context: ManagedObjectContext
        let parent: Player?
        var changes: [String: Change] = [:]
        /// Saves of the other coordinator context not merged here yet, in order.
        let inbox = NotificationRecorder()
        var merged = 0

        init(_ name: String, context: ManagedObjectContext, parent: Player? = nil) {
            self.name = name
            self.context = context
            self.parent = parent
            context.name = name
        }

        func descends(from ancestor: Player) -> Bool {
            var current = parent
            while let player = current {
                if player === ancestor { return true }
                current = player.parent
            }
            return false
        }

        func change(_ code: String, _ edit: (inout Change) -> Void) {
            var change = changes[code] ?? Change()
            edit(&change)
            if change.inserted && change.deleted { changes[code] = nil } else { changes[code] = change }
        }
    }

    @Test(arguments: StoreKind.allCases) func invariantsHoldAndTheStoreMatchesTheModel(_ kind: StoreKind) throws {
        let environment = ProcessInfo.processInfo.environment
        let steps = Int(environment["OCD_RANDOM_GRAPH_STEPS"] ?? "") ?? 1_500
        let replayed: UInt64? = environment["OCD_RANDOM_GRAPH_SEED"].flatMap { UInt64($0) }
        let seeds: [UInt64] = replayed.map { [$0] } ?? [20_261_123, 7, 99]
        for seed in seeds {
            try run(kind, seed: seed, steps: steps)
        }
    }

    /// The checker itself: a graph broken behind the context's back is reported.
    @Test func brokenGraphsAreReported() throws {
        let stack = try TestStack(.inMemory, model: ManagedObjectModel(Probe.self, Label.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let label = Label(context: context), probe = Probe(context: context), other = Probe(context: context)
            probe.owner = label
            try context.save()
            _ = label.owned.count
            #expect(context.invariantViolations().isEmpty)

            // A member removed from one end of a relationship only.
            let index = try #require(label.entity.toManyIndexByName["owned"])
            label.toMany[index].remove(probe.objectID)
            #expect(context.invariantViolations().contains { $0.contains("'owner'") && $0.contains("does not hold it") })
            label.toMany[index].insert(probe.objectID)
            #expect(context.invariantViolations().isEmpty)

            // An object registered under another object's ID.
            context.graph.unregister(id: other.objectID)
            context.graph.register(probe, as: other.objectID)
            #expect(context.invariantViolations().contains { $0.contains("registered under another ID") })
            // Forgotten before the block ends (OCD_CHECK_INVARIANTS=1 checks then).
            context.reset()
            #expect(context.invariantViolations().isEmpty)
        }
    }

    func run(_ kind: StoreKind, seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let stack = try TestStack(kind, model: ManagedObjectModel(Probe.self, Label.self))
        let setup = stack.container.newBackgroundContext()
        try setup.performAndWait { () throws in
            for (rank, name) in Self.labelNames.enumerated() {
                let label = Label(context: setup)
                label.name = name
                label.rank = Int32(rank)
            }
            try setup.save()
        }
        let a = Player("A", context: stack.container.newBackgroundContext())
        let b = Player("B", context: stack.container.newBackgroundContext())
        func child(_ name: String, of parent: Player) -> Player {
            let context = ManagedObjectContext(concurrencyType: .privateQueue)
            context.parent = parent.context
            return Player(name, context: context, parent: parent)
        }
        let c = child("C", of: a)
        let d = child("D", of: c)
        let players = [a, b, c, d]
        for player in players { player.context.performAndWait { player.context.undoManager = UndoManager() } }
        // B also takes A's saves as they happen (besides the explicit merges of the steps), and so
        // do C and D from their parents' saves and pushes.
        for player in [b, c, d] { player.context.performAndWait { player.context.automaticallyMergesChangesFromParent = true } }
        var observers: [any NSObjectProtocol] = []
        for (saver, receiver) in [(a, b), (b, a)] {
            let inbox = receiver.inbox
            observers.append(NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: saver.context, queue: nil) { inbox.append($0) })
        }
        defer { for observer in observers { NotificationCenter.default.removeObserver(observer) } }

        var store: [String: Row] = [:]
        var nextCode = 0
        var history: [String] = []
        func where_(_ step: Int) -> String { "seed \(seed), step \(step), \(kind) store; last steps: \(history.suffix(12).joined(separator: "; ")) (replay with OCD_RANDOM_GRAPH_SEED=\(seed))" }

        for step in 0..<steps {
            let player = players.randomElement(using: &random)!
            let context = player.context
            let roll = Int.random(in: 0..<100, using: &random)
            var note = "\(player.name): "
            var saveOutcome: Error?? = nil   // .none: no save; .some(nil): saved; .some(error): failed

            try context.performAndWait { () throws in
                let request = Probe.fetchRequest()
                request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
                let visible = try context.fetch(request)
                let labels = try context.fetch(Label.fetchRequest()).sorted { $0.name < $1.name }
                switch roll {
                case 0..<14:
                    let probe = Probe(context: context)
                    probe.code = "p\(nextCode)"
                    probe.title = Self.titles.randomElement(using: &random)!
                    nextCode += 1
                    player.change(probe.code) { $0.inserted = true; $0.title = probe.title; $0.owner = .some(nil) }
                    note += "insert \(probe.code)"
                case 14..<50 where !visible.isEmpty:
                    let probe = visible.randomElement(using: &random)!
                    let code = probe.code
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        // Setting the value a property already has is no change (a merge
                        // then brings the other context's value, as in Core Data).
                        let title = Self.titles.randomElement(using: &random)!
                        if probe.title != title { player.change(code) { $0.title = title } }
                        probe.title = title
                        note += "\(code).title = \(title.debugDescription)"
                    case 1:
                        let owner = Bool.random(using: &random) ? nil : labels.randomElement(using: &random)
                        if probe.owner != owner { player.change(code) { $0.owner = .some(owner?.name) } }
                        probe.owner = owner
                        note += "\(code).owner = \(owner?.name ?? "nil")"
                    default:
                        let label = labels.randomElement(using: &random)!
                        if probe.labels.contains(label) {
                            probe.labels.remove(label)
                            player.change(code) { if $0.added.remove(label.name) == nil { $0.removed.insert(label.name) } }
                            note += "\(code).labels − \(label.name)"
                        } else {
                            probe.labels.insert(label)
                            player.change(code) { if $0.removed.remove(label.name) == nil { $0.added.insert(label.name) } }
                            note += "\(code).labels + \(label.name)"
                        }
                    }
                case 50..<60 where !visible.isEmpty:
                    let probe = visible.randomElement(using: &random)!
                    context.delete(probe)
                    player.change(probe.code) { $0.deleted = true }
                    note += "delete \(probe.code)"
                case 60..<75:
                    note += "save"
                    do {
                        try context.save()
                        saveOutcome = .some(nil)
                    } catch {
                        saveOutcome = .some(error)
                    }
                case 75..<83 where player.parent == nil:
                    // Merge the next save of the other coordinator context.
                    let inbox = player.inbox.values
                    guard player.merged < inbox.count else { note += "nothing to merge"; break }
                    context.mergeChanges(fromContextDidSave: inbox[player.merged])
                    player.merged += 1
                    note += "merge save \(player.merged)"
                case 83..<88 where !visible.isEmpty:
                    // Refresh without keeping changes: only objects whose changes are their own
                    // attributes (relationship changes also live on the other end).
                    let probe = visible.randomElement(using: &random)!
                    let change = player.changes[probe.code]
                    guard change?.inserted != true, change?.owner == nil, change?.added.isEmpty ?? true, change?.removed.isEmpty ?? true else {
                        context.refreshAllObjects()
                        note += "refresh all"
                        break
                    }
                    context.refresh(probe, mergeChanges: false)
                    player.changes[probe.code] = nil
                    note += "refresh \(probe.code)"
                case 88..<92 where !visible.isEmpty:
                    // An edit undone at once leaves nothing to save; redone, it is an edit like
                    // any other. `performAndWait` does not end an event (as in Core Data), so
                    // the changes of earlier steps are grouped first: undo takes back this one.
                    context.processPendingChanges()
                    let probe = visible.randomElement(using: &random)!
                    var code = probe.code
                    let edit: (inout Change) -> Void
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        let title = Self.titles.filter { $0 != probe.title }.randomElement(using: &random)!
                        probe.title = title
                        edit = { $0.title = title }
                        note += "\(code).title = \(title.debugDescription)"
                    case 1:
                        context.delete(probe)
                        edit = { $0.deleted = true }
                        note += "delete \(code)"
                    default:
                        let inserted = Probe(context: context)
                        code = "p\(nextCode)"
                        nextCode += 1
                        let title = Self.titles.randomElement(using: &random)!
                        inserted.code = code
                        inserted.title = title
                        edit = { $0.inserted = true; $0.title = title; $0.owner = .some(nil) }
                        note += "insert \(code)"
                    }
                    context.processPendingChanges()
                    context.undo()
                    note += ", undo"
                    if Bool.random(using: &random) {
                        context.redo()
                        player.change(code, edit)
                        note += ", redo"
                    }
                case 92..<95:
                    context.rollback()
                    player.changes = [:]
                    note += "rollback"
                default:
                    context.reset()
                    player.changes = [:]
                    note += "reset"
                }
            }
            history.append(note)

            // The model follows what the step did.
            if case .some(let failure) = saveOutcome {
                if let parent = player.parent {
                    if let failure {
                        Issue.record("a child's save failed: \(failure) — \(where_(step))")
                        return
                    }
                    for (code, change) in player.changes {
                        parent.change(code) { $0.absorb(change) }
                    }
                    player.changes = [:]
                } else if let failure {
                    guard let error = failure as? CoreDataError, error.code == .managedObjectMerge else {
                        Issue.record("a save failed with \(failure) — \(where_(step))")
                        return
                    }
                    context.performAndWait { context.rollback() }
                    player.changes = [:]
                    history[history.count - 1] += " (conflict: rolled back)"
                } else {
                    for (code, change) in player.changes.sorted(by: { $0.key < $1.key }) {
                        if change.inserted {
                            store[code] = Row(title: change.title ?? "", owner: change.owner ?? nil, labels: change.added)
                        } else if change.deleted {
                            store[code] = nil
                        } else if var row = store[code] {
                            if let title = change.title { row.title = title }
                            if let owner = change.owner { row.owner = owner }
                            row.labels.formUnion(change.added)
                            row.labels.subtract(change.removed)
                            store[code] = row
                        }
                    }
                    player.changes = [:]
                }
            }
            if note.hasSuffix("rollback") || note.hasSuffix("reset") || note.contains("rolled back") {
                // The descendants' views rest on the changes just discarded: start them over.
                for descendant in players where descendant.descends(from: player) {
                    descendant.context.performAndWait { descendant.context.reset() }
                    descendant.changes = [:]
                }
            }

            for checked in players {
                let violations = checked.context.performAndWait { checked.context.invariantViolations() }
                if !violations.isEmpty {
                    Issue.record("context \(checked.name): \(violations.prefix(5).joined(separator: "; ")) — \(where_(step))")
                    return
                }
            }
            if case .some(.none) = saveOutcome, player.parent == nil, let mismatch = try compare(stack, with: store) {
                // The steps that touched the probes in question, with every save and merge.
                let codes = Set(mismatch.codes)
                let trail = history.enumerated().filter { _, step in
                    step.hasSuffix("save") || step.contains("merge") || step.contains("rolled back") || codes.contains { step.contains(" \($0)") || step.contains(" \($0).") || step.contains(": \($0).") }
                }.suffix(40).map { "\($0): \($1)" }
                Issue.record("after a save the store differs from the model: \(mismatch.message) — \(where_(step))\nTrail:\n\(trail.joined(separator: "\n"))")
                return
            }
        }
        if let mismatch = try compare(stack, with: store) {
            Issue.record("at the end the store differs from the model: \(mismatch.message) — seed \(seed), \(kind) store")
        }
    }

    /// What a fresh context reads, from both ends of each relationship, against the model.
    func compare(_ stack: TestStack, with store: [String: Row]) throws -> (message: String, codes: [String])? {
        let reader = stack.container.newBackgroundContext()
        return try reader.performAndWait { () throws -> (message: String, codes: [String])? in
            let probes = try reader.fetch(Probe.fetchRequest())
            var read: [String: Row] = [:]
            for probe in probes {
                if read[probe.code] != nil { return ("two probes have the code \(probe.code)", [probe.code]) }
                read[probe.code] = Row(title: probe.title, owner: probe.owner?.name, labels: Set(probe.labels.map(\.name)))
            }
            if read != store {
                let codes = Set(read.keys).union(store.keys).sorted().filter { read[$0] != store[$0] }
                let message = codes.prefix(5).map { "\($0): store \(read[$0].map(\.description) ?? "missing"), model \(store[$0].map(\.description) ?? "missing")" }.joined(separator: "; ")
                return (message, Array(codes.prefix(5)))
            }
            for label in try reader.fetch(Label.fetchRequest()) {
                let members = Set(label.probes.map(\.code)), expected = Set(store.filter { $0.value.labels.contains(label.name) }.keys)
                if members != expected { return ("label \(label.name) lists probes \(members.sorted()), the model \(expected.sorted())", Array(members.symmetricDifference(expected))) }
                let owned = Set(label.owned.map(\.code)), expectedOwned = Set(store.filter { $0.value.owner == label.name }.keys)
                if owned != expectedOwned { return ("label \(label.name) owns probes \(owned.sorted()), the model \(expectedOwned.sorted())", Array(owned.symmetricDifference(expectedOwned))) }
            }
            return nil
        }
    }
}
