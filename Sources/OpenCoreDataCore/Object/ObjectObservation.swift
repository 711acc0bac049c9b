import Observation

/// Managed objects take part in Observation: `withObservationTracking` (and what is built on it)
/// sees a read of a `@Managed` attribute or relationship, and fires when that property changes —
/// by a local edit, undo, a merge, a refresh or a rollback — in a context whose
/// ``ManagedObjectContext/makesObjectsObservable`` is on (main-queue contexts, by default).
extension ManagedObject: Observable {}

/// One object's Observation registrar, made on the first read of one of its properties while its
/// context makes objects observable (objects of other contexts never pay for one).
// Sendable: its only stored property is a registrar, which is Sendable and thread-safe.
package final class ObjectObservation: Sendable {
    let registrar = ObservationRegistrar()
}

/// The key paths Observation knows an object's properties by: property *n* is value slot *n*
/// (stored attributes, then to-one relationships), then the to-many relationships in order.
enum ObservedProperty {
    /// Made once per process: a key path with an argument is an allocation, and reads are many.
    static let common: [any KeyPath<ManagedObject, Int> & Sendable] = (0..<128).map { \ManagedObject.[observedProperty: $0] }

    static func keyPath(_ number: Int) -> any KeyPath<ManagedObject, Int> & Sendable {
        number < common.count ? common[number] : \ManagedObject.[observedProperty: number]
    }
}

extension ManagedObject {
    /// Observation's handle on property `number` (see `ObservedProperty`): the key paths differ
    /// by their argument, so that each property of each object is observed apart.
    package subscript(observedProperty number: Int) -> Int { number }

    /// Records a read of property `number` for Observation, when the context makes objects
    /// observable (one load and a branch otherwise).
    @inline(__always)
    package func observeRead(_ number: Int) {
        guard let handle = contextHandle, handle.makesObjectsObservable else { return }
        observedRead(number)
    }

    private func observedRead(_ number: Int) {
        let observation: ObjectObservation
        if let existing = self.observation {
            observation = existing
        } else {
            observation = ObjectObservation()
            self.observation = observation
        }
        observation.registrar.access(self, keyPath: ObservedProperty.keyPath(number))
    }

    /// Tells Observation that property `number` changed (after the change: an observer that
    /// reads at once sees the new value). Nothing to do unless the property was read observably.
    @inline(__always)
    package func observedChange(_ number: Int) {
        guard let observation else { return }
        let keyPath = ObservedProperty.keyPath(number)
        observation.registrar.willSet(self, keyPath: keyPath)
        observation.registrar.didSet(self, keyPath: keyPath)
    }

    /// Tells Observation that any property may have changed (values merged, refreshed or rolled
    /// back: the change arrives as a new row, not property by property).
    package func observedChangeOfEveryProperty() {
        guard let observation else { return }
        let count = entity.valueSlotCount + entity.toManyRelationships.count
        for number in 0..<count { observation.registrar.willSet(self, keyPath: ObservedProperty.keyPath(number)) }
        for number in 0..<count { observation.registrar.didSet(self, keyPath: ObservedProperty.keyPath(number)) }
    }

    /// The property number of a to-many relationship.
    package func observedNumber(ofToMany name: String) -> Int? {
        entity.toManyIndexByName[name].map { entity.valueSlotCount + $0 }
    }
}

/// Passes a context's changes that arrive whole — merges, refreshes, rollbacks — to the
/// Observation registrars of the objects they touch. The context's own edits are told property
/// by property where they are made, so `processPendingChanges()` is skipped here.
final class ObservationForwarder: GraphObserver {
    func graphDidChange(_ change: GraphChange, in context: ManagedObjectContext) {
        guard !change.isOwnEdits else { return }
        for object in change.objects { object.observedChangeOfEveryProperty() }
    }
}
