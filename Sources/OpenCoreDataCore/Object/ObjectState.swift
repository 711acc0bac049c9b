import Foundation

/// Where an object is in its life, as its context sees it. Derived from ``ObjectState``, for
/// reading (descriptions, invariants, the architecture notes); the transitions below are the only
/// way it changes.
package enum ObjectLifecycle: Sendable, Equatable {
    /// Registered without values: they load from the store (or the parent) on first use.
    case fault
    /// Values loaded, no unsaved change.
    case loaded
    /// Inserted and not saved yet.
    case inserted
    /// Saved before, with unsaved changes.
    case updated
    /// To be deleted at the next save.
    case deleted
    /// A fault whose row could not be read: reads as deleted, with nil values
    /// (`shouldDeleteInaccessibleFaults`); the next save or reset discards it.
    case inaccessible
}

/// The state of one managed object: its values, the committed row they came from, what changed
/// since, its to-many relationships and where it is in its life. Owned by the object's context
/// queue (or the thread that made an object without a context).
///
/// Every change of state is one of the named transitions below, in this file: the fields cannot
/// be written from anywhere else, so each transition keeps the fields consistent with each other
/// (a fault has no changes, a committed object has a snapshot, …) in one place.
/// The context keeps its own bookkeeping (registry, pending changes) beside each call.
package struct ObjectState {
    /// Current values, in the entity's slot order; empty while a fault.
    package fileprivate(set) var values: [ManagedValue]
    /// The committed row the values were read from or last saved as; `nil` for new objects.
    package fileprivate(set) var snapshot: RowSnapshot?
    /// Slots written since the last save or fetch; a to-many relationship's changes mark the slot
    /// `entity.valueSlotCount + its index`.
    package fileprivate(set) var dirty = DirtySlots()
    /// What few objects use (to-many relationships, slotless transient values, an Observation
    /// registrar), in a box made on first use: every object is smaller for it (see
    /// `ObjectStateExtras`).
    private var extras: ObjectStateExtras?
    /// The lifecycle flags below, one bit each.
    private var flags: Flag = []

    /// The to-many relationships, in `entity.toManyRelationships` order; empty until one is used.
    /// Changed through `ToManyState`'s own operations; reset only by the transitions here.
    package var toMany: [ToManyState] {
        get { extras?.toMany ?? [] }
        set {
            if extras == nil && newValue.isEmpty { return }
            uniqueExtras().toMany = newValue
        }
        _modify { yield &uniqueExtras().toMany }
    }
    /// Values of transient attributes without a slot (models read from a file or a store's cache),
    /// as set; never saved. Cleared when the object turns into a fault.
    package var transientValues: [String: ManagedValue] {
        get { extras?.transientValues ?? [:] }
        set {
            if extras == nil && newValue.isEmpty { return }
            uniqueExtras().transientValues = newValue
        }
        _modify { yield &uniqueExtras().transientValues }
    }
    /// The object's Observation registrar, made on the first observable read (see
    /// `ObjectObservation`); kept when the object turns into a fault.
    package var observation: ObjectObservation? {
        get { extras?.observation }
        set {
            if extras == nil && newValue == nil { return }
            uniqueExtras().observation = newValue
        }
    }

    /// The values as of the end of the last event (objects-did-change outside a save) in which
    /// the object changed; `nil` when that is its committed row, or its first values if it is
    /// new. What `changedValuesForCurrentEvent()` compares with. In the extras box: only objects
    /// changed in an event that no save ended pay for it.
    package var eventBase: [ManagedValue]? { extras?.eventBase }

    /// The end of an event in which the object changed: its values now are the next event's base
    /// (one reference; the next write copies them).
    package mutating func endEvent() {
        uniqueExtras().eventBase = values
    }

    /// The base of the next event becomes the committed row again (a save, a reload, a rollback).
    private mutating func forgetEvent() {
        if extras?.eventBase != nil { uniqueExtras().eventBase = nil }
    }

    /// The extras box, made now if there is none, and copied first if another state shares it
    /// (a copy of the state must not change this one).
    private mutating func uniqueExtras() -> ObjectStateExtras {
        if extras == nil {
            extras = ObjectStateExtras()
        } else if !isKnownUniquelyReferenced(&extras!) {
            extras = extras!.copy()
        }
        return extras!
    }

    /// One bit per lifecycle flag (one byte in all).
    private struct Flag: OptionSet {
        let rawValue: UInt8
        static let fault = Flag(rawValue: 1 << 0)
        static let inserted = Flag(rawValue: 1 << 1)
        static let deleted = Flag(rawValue: 1 << 2)
        static let inaccessible = Flag(rawValue: 1 << 3)
        static let wasInserted = Flag(rawValue: 1 << 4)
        static let deletionPrepared = Flag(rawValue: 1 << 5)
    }

    private subscript(flag: Flag) -> Bool {
        get { flags.contains(flag) }
        set { if newValue { flags.insert(flag) } else { flags.remove(flag) } }
    }

    package fileprivate(set) var isFault: Bool { get { self[.fault] } set { self[.fault] = newValue } }
    package fileprivate(set) var isInserted: Bool { get { self[.inserted] } set { self[.inserted] = newValue } }
    package fileprivate(set) var isDeleted: Bool { get { self[.deleted] } set { self[.deleted] = newValue } }
    /// Set when a fault could not be fulfilled and the object now reads as deleted; its values are
    /// not the store's.
    package fileprivate(set) var isInaccessible: Bool { get { self[.inaccessible] } set { self[.inaccessible] = newValue } }
    /// Whether the object was ever inserted into a context (`awakeFromInsert` runs once).
    package fileprivate(set) var wasInserted: Bool { get { self[.wasInserted] } set { self[.wasInserted] = newValue } }
    /// Whether `prepareForDeletion` ran for the current deletion.
    package fileprivate(set) var deletionPrepared: Bool { get { self[.deletionPrepared] } set { self[.deletionPrepared] = newValue } }

    /// A new object's state: the entity's default values, not inserted anywhere yet.
    package init(defaults: [ManagedValue]) {
        values = defaults
    }

    package var hasChanges: Bool { isInserted || isDeleted || !dirty.isEmpty }

    package var lifecycle: ObjectLifecycle {
        if isInaccessible { return .inaccessible }
        if isDeleted { return .deleted }
        if isInserted { return .inserted }
        if isFault { return .fault }
        return dirty.isEmpty ? .loaded : .updated
    }

    // MARK: - Loading

    /// Turns the object into a fault: values, snapshot, changes, relationships and transient
    /// values are dropped; the next use loads them again (refresh without merging, a rollback of
    /// an inaccessible object, an object known only by its ID).
    package mutating func becomeFault() {
        forgetEvent()
        values = []
        snapshot = nil
        dirty.removeAll()
        toMany = []
        transientValues = [:]
        isFault = true
        isDeleted = false
        isInaccessible = false
    }

    /// Fulfils a fault (or reloads an unchanged object) with a committed row.
    package mutating func fulfil(with row: RowSnapshot) {
        forgetEvent()
        values = row.values
        snapshot = row
        isFault = false
    }

    /// Takes a newer committed row (a merge, a refresh keeping changes, a merge policy's
    /// resolution): the `kept` slots keep their values and stay changed, every other slot takes
    /// the row's value.
    package mutating func rebase(on row: RowSnapshot, keeping kept: DirtySlots) {
        forgetEvent()
        var merged = row.values
        for slot in kept.slots where slot < merged.count && slot < values.count { merged[slot] = values[slot] }
        values = merged
        dirty = kept
        snapshot = row
        isFault = false
    }

    /// A fault whose row cannot be read: nil values, no relationships, deleted.
    package mutating func becomeInaccessible(slotCount: Int, toManyCount: Int) {
        values = Array(repeating: .null, count: slotCount)
        snapshot = nil
        toMany = Array(repeating: .empty, count: toManyCount)
        isFault = false
        isInaccessible = true
        isDeleted = true
    }

    // MARK: - Changing

    /// Writes one slot (an attribute or a to-one relationship) and marks it changed.
    package mutating func write(_ value: ManagedValue, slot: Int) {
        values[slot] = value
        dirty.insert(slot)
    }

    /// Sets a slot without marking it changed (`setPrimitiveValue`, and setters inside
    /// `awakeFromFetch`): a baseline value, saved only with an insert or when the slot is marked
    /// changed later (`didChangeValue(forKey:)`).
    package mutating func writePrimitive(_ value: ManagedValue, slot: Int) {
        values[slot] = value
    }

    /// Marks a slot changed after its value was set primitively (`didChangeValue(forKey:)`); like
    /// a write, a value set back to the committed one is still a change (`hasChanges`), though not
    /// a persistent one (`hasPersistentChangedValues`).
    package mutating func markChanged(slot: Int) {
        dirty.insert(slot)
    }

    /// Undo: puts a slot back as it was before a write, value and change mark. A slot that had no
    /// change has none again unless the committed row moved on since (a save in between): then the
    /// old value is a change to save.
    package mutating func restore(_ value: ManagedValue, slot: Int, changed: Bool) {
        values[slot] = value
        let committed = snapshot.flatMap { slot < $0.values.count ? $0.values[slot] : nil }
        if changed || committed != value { dirty.insert(slot) } else { dirty.remove(slot) }
    }

    /// Marks a to-many relationship (by its index) changed.
    package mutating func markToManyChanged(_ index: Int, slotCount: Int) {
        dirty.insert(slotCount + index)
    }

    /// Replaces temporary IDs held in relationship slots by permanent ones (not a change).
    package mutating func remap(_ map: [ManagedObjectID: ManagedObjectID], relationshipSlots: Range<Int>) {
        for slot in relationshipSlots where slot < values.count {
            if case .object(let id) = values[slot], let permanent = map[id] { values[slot] = .object(permanent) }
        }
        for index in toMany.indices { toMany[index].remap(map) }
    }

    /// Inserted into a context (or taken back from a delete of an unsaved insert).
    package mutating func insert() {
        isInserted = true
        isDeleted = false
        wasInserted = true
    }

    /// A child's insert pushed into this context: inserted, with every slot changed.
    package mutating func receiveInsert(values pushed: [ManagedValue]) {
        values = pushed
        isFault = false
        isInserted = true
        for slot in pushed.indices { dirty.insert(slot) }
    }

    /// Marked for deletion at the next save.
    package mutating func delete() {
        isDeleted = true
        deletionPrepared = false
    }

    /// `prepareForDeletion` ran for this deletion (it runs once per deletion).
    package mutating func prepareDeletion() {
        deletionPrepared = true
    }

    /// A delete taken back (undo). An object whose row went away meanwhile becomes a fault: its
    /// next use asks the store again (and finds the row gone, or back).
    package mutating func undelete() {
        if isInaccessible { becomeFault() } else { isDeleted = false }
    }

    // MARK: - Saving and discarding

    /// The object's changes were written (to the store, or pushed to the parent): they become its
    /// committed state at `version`.
    package mutating func commit(version: Int64) {
        forgetEvent()
        snapshot = RowSnapshot(values: values, version: version)
        isInserted = false
        dirty.removeAll()
        for index in toMany.indices { toMany[index].commit() }
    }

    /// An unsaved insert discarded (rollback, or a uniqueness conflict resolved for the row).
    package mutating func forgetInsert() {
        forgetEvent()
        isInserted = false
        isDeleted = false
        dirty.removeAll()
        toMany = []
    }

    /// Unsaved changes discarded (rollback): the committed values come back.
    package mutating func discardChanges() {
        forgetEvent()
        if let snapshot { values = snapshot.values }
        toMany = []
        isDeleted = false
        dirty.removeAll()
    }

    /// The row was deleted elsewhere and the deletion is accepted here: deleted, nothing to save.
    package mutating func acceptDeletionElsewhere() {
        isDeleted = true
        isInserted = false
        dirty.removeAll()
    }

    /// The row was deleted elsewhere but the object is kept (a merge policy): it is written again,
    /// every value, as an insert under its key.
    package mutating func reinsert() {
        isInserted = true
        isDeleted = false
        snapshot = nil
        for slot in values.indices { dirty.insert(slot) }
    }

    /// A delete that a merge policy takes back: the store's row and no changes.
    package mutating func revertDeletion(to row: RowSnapshot) {
        forgetEvent()
        values = row.values
        snapshot = row
        isDeleted = false
        dirty.removeAll()
    }

    /// A delete that stays, on top of a newer committed row.
    package mutating func keepDeletion(over row: RowSnapshot) {
        snapshot = row
    }

    /// An insert that found its row already stored (a uniqueness constraint merged it): the object
    /// becomes that row, keeping its own values as changes (`keepingValues`) or taking the row's.
    package mutating func becomeStored(as row: RowSnapshot, keepingValues: Bool, toManyBase: Int) {
        forgetEvent()
        isInserted = false
        snapshot = row
        dirty.removeAll()
        if keepingValues {
            for slot in values.indices where slot < row.values.count && values[slot] != row.values[slot] { dirty.insert(slot) }
        } else {
            values = row.values
        }
        for (index, state) in toMany.enumerated() where state.hasChanges { dirty.insert(toManyBase + index) }
    }
}

/// The rarely used parts of an object's state, boxed so that objects without them carry one
/// pointer instead (an object of a context's fetch is 16 bytes smaller). Owned like the state
/// that holds it: copied before a change when a copy of that state shares it.
final class ObjectStateExtras {
    var toMany: [ToManyState] = []
    var transientValues: [String: ManagedValue] = [:]
    var observation: ObjectObservation?
    var eventBase: [ManagedValue]?

    init() {}

    func copy() -> ObjectStateExtras {
        let copy = ObjectStateExtras()
        copy.toMany = toMany
        copy.transientValues = transientValues
        copy.observation = observation
        copy.eventBase = eventBase
        return copy
    }
}
