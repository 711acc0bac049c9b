import Foundation

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
    /// What few objects use (to-many relationships, slotless transient values, an Observation
    /// registrar, changes to slots past the 32nd), in a box made on first use: every object is
    /// smaller for it (see `ObjectStateExtras`).
    private var extras: ObjectStateExtras?
    /// The first 32 of the slots written since the last save or fetch, one bit each; later slots
    /// (entities with more attributes and relationships) are in the extras box. 32 bits rather
    /// than 64 keep the object in a 96-byte block of memory instead of 112.
    private var dirtyFirst32: UInt32 = 0
    /// Where the object is in its life; moved only by the transitions below.
    package private(set) var phase = ObjectPhase.detached
    /// The two marks below, one bit each.
    private var marks: Mark = []

    /// Slots written since the last save or fetch; a to-many relationship's changes mark the slot
    /// `entity.valueSlotCount + its index`.
    package var dirty: DirtySlots {
        var slots = extras?.dirtyBeyond32 ?? DirtySlots()
        slots.insertFirst32(dirtyFirst32)
        return slots
    }

    /// Whether any slot is marked written (without building the set).
    package var hasDirtySlots: Bool { dirtyFirst32 != 0 || hasDirtySlotsBeyond32 }

    /// The first 32 written slots as bits: with ``hasDirtySlotsBeyond32`` false, the whole set
    /// (a save compares objects' changed slots by it, without building sets).
    package var dirtySlotsFirst32: UInt32 { dirtyFirst32 }

    /// Whether a slot past the 32nd is marked written.
    package var hasDirtySlotsBeyond32: Bool { extras?.dirtyBeyond32.isEmpty == false }

    @inline(__always)
    private mutating func markDirty(_ slot: Int) {
        if slot < 32 { dirtyFirst32 |= 1 << UInt32(slot) } else { markDirtyBeyond32(slot) }
    }

    @inline(never)
    private mutating func markDirtyBeyond32(_ slot: Int) {
        uniqueExtras().dirtyBeyond32.insert(slot)
    }

    private mutating func unmarkDirty(_ slot: Int) {
        if slot < 32 {
            dirtyFirst32 &= ~(1 << UInt32(slot))
        } else if extras?.dirtyBeyond32.contains(slot) == true {
            uniqueExtras().dirtyBeyond32.remove(slot)
        }
    }

    private mutating func setDirty(_ slots: DirtySlots) {
        dirtyFirst32 = slots.first32
        let beyond = slots.beyond32
        if !beyond.isEmpty || extras?.dirtyBeyond32.isEmpty == false { uniqueExtras().dirtyBeyond32 = beyond }
    }

    @inline(__always)
    private mutating func clearDirty() {
        dirtyFirst32 = 0
        if extras != nil { clearDirtyBeyond32() }
    }

    @inline(never)
    private mutating func clearDirtyBeyond32() {
        if extras?.dirtyBeyond32.isEmpty == false { uniqueExtras().dirtyBeyond32 = DirtySlots() }
    }

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

    /// What the object remembers across phases, one bit each.
    private struct Mark: OptionSet {
        let rawValue: UInt8
        static let wasInserted = Mark(rawValue: 1 << 0)
        static let deletionPrepared = Mark(rawValue: 1 << 1)
    }

    private subscript(mark: Mark) -> Bool {
        get { marks.contains(mark) }
        set { if newValue { marks.insert(mark) } else { marks.remove(mark) } }
    }

    package var isFault: Bool { phase.isFault }
    package var isInserted: Bool { phase.isInserted }
    package var isDeleted: Bool { phase.isDeleted }
    /// Set when a fault could not be fulfilled and the object now reads as deleted; its values are
    /// not the store's.
    package var isInaccessible: Bool { phase.isInaccessible }
    /// Whether the object was ever inserted into a context (`awakeFromInsert` runs once).
    package fileprivate(set) var wasInserted: Bool { get { self[.wasInserted] } set { self[.wasInserted] = newValue } }
    /// Whether `prepareForDeletion` ran for the current deletion.
    package fileprivate(set) var deletionPrepared: Bool {
        get { self[.deletionPrepared] }
        set { self[.deletionPrepared] = newValue }
    }

    /// A transition the phase table does not list: a bug in the context's bookkeeping, never a
    /// user's doing (the public operations check what users may ask). Debug builds, which run the
    /// tests, stop here; release builds leave the object as it was.
    private func refuse(_ transition: StaticString) {
        assertionFailure("An object in phase '\(phase)' cannot \(transition)")
    }

    /// A new object's state: the entity's default values, not inserted anywhere yet.
    package init(defaults: [ManagedValue]) {
        values = defaults
    }

    package var hasChanges: Bool { isInserted || isDeleted || hasDirtySlots }

    /// Whether the object is saved before and has unsaved changes to its values.
    package var isUpdated: Bool { phase == .loaded && hasDirtySlots }

    // MARK: - Loading

    /// Turns the object into a fault: values, snapshot, changes, relationships and transient
    /// values are dropped; the next use loads them again (an object known only by its ID, refresh
    /// without merging, a rollback of a deletion or of an inaccessible object).
    package mutating func becomeFault() {
        switch phase {
        case .detached, .loaded, .fault, .deleted, .deletedFault, .inaccessible: break
        case .inserted, .insertedDeleted: return refuse("become a fault")
        }
        forgetEvent()
        values = []
        snapshot = nil
        clearDirty()
        toMany = []
        transientValues = [:]
        phase = .fault
    }

    /// Fulfils a fault (or reloads an unchanged object) with a committed row; a deleted fault
    /// stays deleted.
    package mutating func fulfil(with row: RowSnapshot) {
        switch phase {
        case .detached, .fault, .loaded: phase = .loaded
        case .deletedFault: phase = .deleted
        case .inserted, .deleted, .insertedDeleted, .inaccessible: return refuse("be fulfilled")
        }
        forgetEvent()
        values = row.values
        snapshot = row
    }

    /// Takes a newer committed row (a merge, a refresh keeping changes, a merge policy's
    /// resolution): the `kept` slots keep their values and stay changed, every other slot takes
    /// the row's value.
    package mutating func rebase(on row: RowSnapshot, keeping kept: DirtySlots) {
        switch phase {
        case .loaded, .fault: phase = .loaded
        case .deleted, .deletedFault: phase = .deleted
        case .detached, .inserted, .insertedDeleted, .inaccessible: return refuse("take a newer row")
        }
        forgetEvent()
        var merged = row.values
        for slot in kept.slots where slot < merged.count && slot < values.count { merged[slot] = values[slot] }
        values = merged
        setDirty(kept)
        snapshot = row
    }

    /// A fault whose row cannot be read (or a deleted object whose row went away): nil values, no
    /// relationships, deleted.
    package mutating func becomeInaccessible(slotCount: Int, toManyCount: Int) {
        switch phase {
        case .fault, .deletedFault, .deleted, .inaccessible: phase = .inaccessible
        case .detached, .loaded, .inserted, .insertedDeleted: return refuse("become inaccessible")
        }
        values = Array(repeating: .null, count: slotCount)
        snapshot = nil
        toMany = Array(repeating: .empty, count: toManyCount)
    }

    // MARK: - Changing (values of loaded, inserted and detached objects; not phase moves)

    /// Writes one slot (an attribute or a to-one relationship) and marks it changed.
    @inline(__always)
    package mutating func write(_ value: ManagedValue, slot: Int) {
        values[slot] = value
        markDirty(slot)
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
        markDirty(slot)
    }

    /// Undo: puts a slot back as it was before a write, value and change mark. A slot that had no
    /// change has none again unless the committed row moved on since (a save in between): then the
    /// old value is a change to save.
    package mutating func restore(_ value: ManagedValue, slot: Int, changed: Bool) {
        values[slot] = value
        let committed = snapshot.flatMap { slot < $0.values.count ? $0.values[slot] : nil }
        if changed || committed != value { markDirty(slot) } else { unmarkDirty(slot) }
    }

    /// Marks a to-many relationship (by its index) changed.
    package mutating func markToManyChanged(_ index: Int, slotCount: Int) {
        markDirty(slotCount + index)
    }

    /// Replaces temporary IDs held in relationship slots by permanent ones (not a change).
    package mutating func remap(_ map: [ManagedObjectID: ManagedObjectID], relationshipSlots: Range<Int>) {
        for slot in relationshipSlots where slot < values.count {
            if case .object(let id) = values[slot], let permanent = map[id] { values[slot] = .object(permanent) }
        }
        for index in toMany.indices { toMany[index].remap(map) }
    }

    // MARK: - Inserting and deleting

    /// Inserted into a context (or taken back from a delete of an unsaved insert).
    package mutating func insert() {
        switch phase {
        case .detached, .inserted, .insertedDeleted: phase = .inserted
        case .loaded, .fault, .deleted, .deletedFault, .inaccessible: return refuse("be inserted")
        }
        wasInserted = true
    }

    /// A child's insert pushed into this context: inserted, with every slot changed.
    package mutating func receiveInsert(values pushed: [ManagedValue]) {
        switch phase {
        case .detached, .fault: phase = .inserted
        case .loaded, .inserted, .deleted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("receive an insert")
        }
        values = pushed
        for slot in pushed.indices { markDirty(slot) }
    }

    /// Marked for deletion at the next save.
    package mutating func delete() {
        switch phase {
        case .loaded: phase = .deleted
        case .fault: phase = .deletedFault
        case .inserted: phase = .insertedDeleted
        case .detached, .deleted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("be deleted")
        }
        deletionPrepared = false
    }

    /// `prepareForDeletion` ran for this deletion (it runs once per deletion).
    package mutating func prepareDeletion() {
        deletionPrepared = true
    }

    /// A delete taken back (undo). An object whose row went away meanwhile becomes a fault: its
    /// next use asks the store again (and finds the row gone, or back).
    package mutating func undelete() {
        switch phase {
        case .deleted: phase = .loaded
        case .deletedFault: phase = .fault
        case .insertedDeleted: phase = .inserted
        case .inaccessible: becomeFault()
        case .detached, .loaded, .fault, .inserted: return refuse("be undeleted")
        }
    }

    // MARK: - Saving and discarding

    /// The object's changes were written (to the store, or pushed to the parent): they become its
    /// committed state at `version`.
    package mutating func commit(version: Int64) {
        switch phase {
        case .inserted, .loaded: phase = .loaded
        case .detached, .fault, .deleted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("commit")
        }
        forgetEvent()
        snapshot = RowSnapshot(values: values, version: version)
        clearDirty()
        for index in toMany.indices { toMany[index].commit() }
    }

    /// An unsaved insert discarded (rollback, or a uniqueness conflict resolved for the row): the
    /// object leaves the context with the values it has.
    package mutating func forgetInsert() {
        switch phase {
        case .inserted, .insertedDeleted: phase = .detached
        case .detached, .loaded, .fault, .deleted, .deletedFault, .inaccessible: return refuse("forget its insert")
        }
        forgetEvent()
        clearDirty()
        toMany = []
    }

    /// Unsaved changes discarded (rollback): the committed values come back.
    package mutating func discardChanges() {
        switch phase {
        case .loaded, .fault: break
        case .detached, .inserted, .deleted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("discard its changes")
        }
        forgetEvent()
        if let snapshot { values = snapshot.values }
        toMany = []
        clearDirty()
    }

    /// The row was deleted elsewhere and the deletion is accepted here: deleted, nothing to save.
    package mutating func acceptDeletionElsewhere() {
        switch phase {
        case .loaded, .deleted: phase = .deleted
        case .fault, .deletedFault: phase = .deletedFault
        case .detached, .inserted, .insertedDeleted, .inaccessible: return refuse("accept a deletion made elsewhere")
        }
        clearDirty()
    }

    /// The row was deleted elsewhere but the object is kept (a merge policy): it is written again,
    /// every value, as an insert under its key.
    package mutating func reinsert() {
        switch phase {
        case .loaded, .deleted: phase = .inserted
        case .detached, .fault, .inserted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("be inserted again")
        }
        snapshot = nil
        for slot in values.indices { markDirty(slot) }
    }

    /// A delete that a merge policy takes back: the store's row and no changes.
    package mutating func revertDeletion(to row: RowSnapshot) {
        switch phase {
        case .deleted, .deletedFault: phase = .loaded
        case .detached, .loaded, .fault, .inserted, .insertedDeleted, .inaccessible: return refuse("have its deletion reverted")
        }
        forgetEvent()
        values = row.values
        snapshot = row
        clearDirty()
    }

    /// A delete that stays, on top of a newer committed row.
    package mutating func keepDeletion(over row: RowSnapshot) {
        switch phase {
        case .deleted, .deletedFault: break
        case .detached, .loaded, .fault, .inserted, .insertedDeleted, .inaccessible: return refuse("keep a deletion")
        }
        snapshot = row
    }

    /// An insert that found its row already stored (a uniqueness constraint merged it): the object
    /// becomes that row, keeping its own values as changes (`keepingValues`) or taking the row's.
    package mutating func becomeStored(as row: RowSnapshot, keepingValues: Bool, toManyBase: Int) {
        switch phase {
        case .inserted: phase = .loaded
        case .detached, .loaded, .fault, .deleted, .deletedFault, .insertedDeleted, .inaccessible: return refuse("become a stored row")
        }
        forgetEvent()
        snapshot = row
        clearDirty()
        if keepingValues {
            for slot in values.indices where slot < row.values.count && values[slot] != row.values[slot] { markDirty(slot) }
        } else {
            values = row.values
        }
        for (index, state) in toMany.enumerated() where state.hasChanges { markDirty(toManyBase + index) }
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
    /// The written slots past the 32nd (see `ObjectState.dirty`).
    var dirtyBeyond32 = DirtySlots()

    init() {}

    func copy() -> ObjectStateExtras {
        let copy = ObjectStateExtras()
        copy.toMany = toMany
        copy.transientValues = transientValues
        copy.observation = observation
        copy.eventBase = eventBase
        copy.dirtyBeyond32 = dirtyBeyond32
        return copy
    }
}
