import Foundation

/// Where the context calls the objects' lifecycle methods (`awakeFromInsert`, `awakeFromFetch`,
/// `willSave`, `didSave`, `prepareForDeletion`, `willTurnIntoFault`, `didTurnIntoFault`): one
/// helper per moment, called from the transitions that make it happen. All on the context's queue.
extension ManagedObjectContext {
    /// Fulfils a fault (or an object refetched over an unchanged one) with a committed row, then
    /// lets it awake from the fetch.
    package func fulfil(_ object: ManagedObject, with row: RowSnapshot) {
        object.state.fulfil(with: row)
        awakeFetched(object)
    }

    /// Runs `awakeFromFetch` with change tracking off: what it sets is baseline, not a change.
    package func awakeFetched(_ object: ManagedObject) {
        handle.awakingFromFetch += 1
        defer { handle.awakingFromFetch -= 1 }
        object.awakeFromFetch()
    }

    /// Turns an object into a fault between `willTurnIntoFault` and `didTurnIntoFault`.
    package func turnIntoFault(_ object: ManagedObject) {
        object.willTurnIntoFault()
        object.state.becomeFault()
        object.didTurnIntoFault()
    }

    /// Runs `prepareForDeletion` once per deletion, before the delete rules touch the object.
    package func prepareDeletion(of object: ManagedObject) {
        guard !object.state.deletionPrepared else { return }
        object.state.prepareDeletion()
        object.prepareForDeletion()
    }

    /// Posts `.NSManagedObjectContextWillSave` and runs `willSave` on every object the save will
    /// write, then on the objects those calls changed (or deleted, through delete rules too),
    /// until a round changes nothing. A round limit turns a `willSave` that changes something
    /// every time into an error instead of a save that never ends.
    func prepareObjectsForSave() throws {
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        func saved(_ object: ManagedObject) -> Bool { object.belongs(to: self) && object.hasChanges }
        var round: [ManagedObject] = []
        graph.pending.forEachHeld { if saved($0) { round.append($0) } }
        var called: Set<ObjectIdentifier>?      // made only when a round changes something
        var rounds = 0
        while !round.isEmpty {
            rounds += 1
            guard rounds <= 100 else {
                let names = Set(round.map(\.entity.name)).sorted().joined(separator: ", ")
                throw CoreDataError(.persistentStoreSave, """
                    willSave() changed objects (\(names)) on each of 100 rounds, so the save would never end; \
                    nothing was saved. Change values in willSave() only when they differ (or with \
                    setPrimitiveValue(_:forKey:)).
                    """,
                                    affectedObjectIDs: round.prefix(10).map(\.objectID))
            }
            for object in round { object.willSave() }
            // What willSave changed (through setters) gets willSave in its turn, and so do
            // objects that joined the save meanwhile (inserted, or deleted by a delete rule).
            guard !graph.unprocessed.isEmpty else { break }
            if called == nil { called = Set(round.map(ObjectIdentifier.init)) }
            let changedAgain = graph.unprocessed.filter(saved)
            processPendingChanges()
            let joined = graph.pending.all.filter { saved($0) && !called!.contains(ObjectIdentifier($0)) }
            var seen = Set<ObjectIdentifier>()
            round = (changedAgain + joined).filter { seen.insert(ObjectIdentifier($0)).inserted }
            called!.formUnion(seen)
        }
    }

    /// Runs `didSave` on the objects of a completed save (deleted ones included).
    func runDidSave(_ objects: [ManagedObject]...) {
        for list in objects {
            for object in list { object.didSave() }
        }
    }
}
