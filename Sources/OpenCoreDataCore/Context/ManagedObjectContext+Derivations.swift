import Foundation

extension ManagedObjectContext {
    /// Computes the derived attributes of the objects a store save writes (`now()`,
    /// `canonical:(…)`, copies of an attribute or of a to-one's attribute), as Core Data's store
    /// does when it writes them. The values are part of the save (no undo, no change
    /// notification: they are the store's, not the app's). Counts are kept by the store.
    func computeDerivations() {
        let now = ManagedValue.date(Date())
        for object in graph.pending.liveInserted(in: self) where !object.entity.savedDerivations.isEmpty {
            derive(object, now: now)
        }
        for object in graph.pending.liveChanged(in: self) where !object.isDeletedFlag && !object.entity.savedDerivations.isEmpty {
            derive(object, now: now)
        }
    }

    private func derive(_ object: ManagedObject, now: ManagedValue) {
        let entity = object.entity
        for (slot, derivation) in entity.savedDerivations {
            let value: ManagedValue
            switch derivation {
            case .count:
                continue
            case .now:
                value = now
            case .canonical(let name):
                guard let source = entity.slotByName[name] else { continue }
                if case .string(let text) = object.values[source] { value = .string(Derivation.canonical(text)) } else { value = .null }
            case .copy(let keys):
                if keys.count == 1 {
                    guard let source = entity.slotByName[keys[0]] else { continue }
                    value = object.values[source]
                } else {
                    guard let link = entity.valueSlot(named: keys[0]) else { continue }
                    guard case .object(let id) = object.values[link] else { value = .null; break }
                    let destination = self.object(with: id)
                    if destination.isFaultFlag { destination.willAccessValue() }
                    guard !destination.isInaccessibleFlag, let source = destination.entity.slotByName[keys[1]] else { value = .null; break }
                    value = destination.values[source]
                }
            }
            if object.values[slot] != value { object.state.write(value, slot: slot) }
        }
    }
}
