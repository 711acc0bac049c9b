import Foundation

/// Where the context calls the objects' lifecycle methods (`awakeFromInsert`, `awakeFromFetch`,
/// `willSave`, `didSave`, `prepareForDeletion`, `willTurnIntoFault`, `didTurnIntoFault`): one
/// helper per moment, called from the transitions that make it happen. All on the context's queue.
extension ManagedObjectContext {
    /// Fulfils a fault (or an object refetched over an unchanged one) with a committed row, then
    /// lets it awake from the fetch.
    package func fulfil(_ object: ManagedObject, with row: RowSnapshot) {
        object.state.fulfil(with: row)
        awakeFromFetch(object)
    }

    /// Runs `awakeFromFetch` with change tracking off: what it sets is baseline, not a change.
    package func awakeFromFetch(_ object: ManagedObject) {
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
    package func prepareForDeletion(_ object: ManagedObject) {
        guard !object.state.deletionPrepared else { return }
        object.state.prepareDeletion()
        object.prepareForDeletion()
    }

    /// Posts `.NSManagedObjectContextWillSave` and runs `willSave` on every object the save will
    /// write, then on the objects those calls changed, until a round changes nothing. A round
    /// limit turns a `willSave` that changes something every time into an error instead of a
    /// save that never ends.
    func prepareObjectsForSave() throws {
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        var round = graph.pending.all.filter { $0.managedObjectContext === self && $0.hasChanges }
        var rounds = 0
        while !round.isEmpty {
            rounds += 1
            guard rounds <= 100 else {
                let names = Set(round.map(\.entity.name)).sorted().joined(separator: ", ")
                throw CoreDataError(.persistentStoreSave, "willSave() changed objects (\(names)) on each of 100 rounds, so the save would never end; nothing was saved. Change values in willSave() only when they differ (or with setPrimitiveValue(_:forKey:)).",
                                    affectedObjectIDs: round.prefix(10).map(\.objectID))
            }
            for object in round { object.willSave() }
            // What willSave changed (through setters) gets willSave in its turn.
            round = graph.unprocessed.filter { $0.managedObjectContext === self && $0.hasChanges }
            processPendingChanges()
        }
    }

    /// Runs `didSave` on the objects of a completed save (deleted ones included).
    func didSave(_ objects: [ManagedObject]...) {
        for list in objects {
            for object in list { object.didSave() }
        }
    }
}
