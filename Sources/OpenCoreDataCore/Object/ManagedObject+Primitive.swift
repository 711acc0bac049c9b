import Foundation

/// Core Data's accessors for classes written by hand, without `@Managed` (as Xcode's generated
/// `@NSManaged` classes are, and custom accessors in them):
///
/// ```swift
/// final class Quake: ManagedObject {
///     var magnitude: Float {
///         get {
///             willAccessValue(forKey: "magnitude")
///             defer { didAccessValue(forKey: "magnitude") }
///             return primitiveValue(forKey: "magnitude") as? Float ?? 0
///         }
///         set {
///             willChangeValue(forKey: "magnitude")
///             setPrimitiveValue(newValue, forKey: "magnitude")
///             didChangeValue(forKey: "magnitude")
///         }
///     }
/// }
/// ```
/// Plain `value(forKey:)` / `setValue(_:forKey:)` getters and setters work as well.
extension ManagedObject {
    /// Loads the object's values if it is a fault. Mirrors `willAccessValue(forKey:)`.
    public func willAccessValue(forKey key: String?) {
        willAccessValue()
    }

    /// Records the read of `key` for Observation. Mirrors `didAccessValue(forKey:)`.
    public func didAccessValue(forKey key: String?) {
        guard let key else { return }
        if let slot = entity.valueSlot(named: key) { observeRead(slot) } else if let number = observedNumber(ofToMany: key) { observeRead(number) }
    }

    /// The value of a property without recording the read: an attribute as its Swift type, a
    /// to-one as its object, a to-many as a `Set` (an ordered one as an array). Loads a fault.
    /// An unknown key traps, as ``value(forKey:)`` does. Mirrors `primitiveValue(forKey:)`.
    public func primitiveValue(forKey key: String) -> Any? {
        if let slot = entity.slotByName[key] {
            willAccessValue()
            return entity.storedAttributes[slot].appValue(values[slot])
        }
        return value(forKey: key)
    }

    /// Sets an attribute without marking it changed, registering undo or telling observers:
    /// in `awakeFromInsert` (the value is part of the insert) and between
    /// ``willChangeValue(forKey:)`` and ``didChangeValue(forKey:)`` (which make it a change).
    /// Alone on a saved object it is not saved unless the attribute changes again. A relationship
    /// key sets the relationship as ``setValue(_:forKey:)`` does (its inverse follows). An unknown
    /// key or a value of the wrong type traps, as ``setValue(_:forKey:)`` does. Mirrors
    /// `setPrimitiveValue(_:forKey:)`.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        guard let slot = entity.slotByName[key] else {
            setValue(value, forKey: key)
            return
        }
        let attribute = entity.storedAttributes[slot]
        guard let stored = attribute.storedValue(value) else {
            preconditionFailure("""
                The value \(value.map { "\($0) (\(type(of: $0)))" } ?? "nil") does not fit the attribute \
                '\(key)' of \(entity.name), which is of type \(attribute.attributeType).
                """)
        }
        willAccessValue()
        state.writePrimitive(stored, slot: slot)
    }

    /// Notes the value of `key` before a change made with ``setPrimitiveValue(_:forKey:)``, for
    /// undo. Mirrors `willChangeValue(forKey:)`.
    public func willChangeValue(forKey key: String) {
        guard let slot = entity.slotByName[key] else { return }   // relationships record their own changes
        willAccessValue()
        managedObjectContext?.graph.changesInProgress[.init(object: ObjectIdentifier(self), slot: slot)] = (values[slot], dirty.contains(slot))
    }

    /// Makes the value set since ``willChangeValue(forKey:)`` a change: saved at the next save,
    /// undoable, announced to observers and fetched results controllers. Mirrors
    /// `didChangeValue(forKey:)`.
    public func didChangeValue(forKey key: String) {
        guard let slot = entity.slotByName[key] else { return }
        willAccessValue()
        let context = managedObjectContext
        let before = context?.graph.changesInProgress.removeValue(forKey: .init(object: ObjectIdentifier(self), slot: slot))
        let old = before?.old ?? snapshot.flatMap { slot < $0.values.count ? $0.values[slot] : nil }
        guard old != values[slot] || before == nil else { return }    // set to what it was: no change
        if let undo = context?.undoStorage, let old {
            undo.record(.value(self, slot: slot, old: old, new: values[slot], wasChanged: before?.wasChanged ?? false))
        }
        state.markChanged(slot: slot)
        context?.graph.objectDidChange(self)
        observedChange(slot)
    }

    /// The IDs of a relationship's destinations, without making objects or loading their values
    /// (a to-many's membership is read from the store when it is not loaded yet). An unknown name
    /// traps. Mirrors `objectIDs(forRelationshipNamed:)`.
    public func objectIDs(forRelationshipNamed name: String) -> [ManagedObjectID] {
        guard let relationship = entity.relationshipsByName[name] else {
            preconditionFailure("""
                The entity \(entity.name) has no relationship '\(name)'. Its relationships are: \
                \(entity.relationshipsByName.keys.sorted().joined(separator: ", ")).
                """)
        }
        guard let context = managedObjectContext else { return [] }
        return context.destinations(of: self, relationship)
    }

    /// A mutable view of a to-many relationship: adding and removing through it changes the
    /// relationship (inverses follow). Mirrors `mutableSetValue(forKey:)`.
    public func mutableSetValue(forKey key: String) -> MutableRelationshipSet {
        MutableRelationshipSet(object: self, key: key)
    }

    /// A mutable view of an ordered to-many relationship. Mirrors `mutableOrderedSetValue(forKey:)`.
    public func mutableOrderedSetValue(forKey key: String) -> MutableRelationshipOrderedSet {
        MutableRelationshipOrderedSet(object: self, key: key)
    }
}
