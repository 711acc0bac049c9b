import Foundation

/// The base class of every object a context manages. Mirrors `NSManagedObject`.
///
/// Declare models with `@Managed`:
/// ```swift
/// @Managed final class Note: ManagedObject {
///     var id: Int32 = 0
///     var text1: String?
/// }
/// let note = Note(context: context)     // inserts
/// note.text1 = "hello"
/// try context.save()
/// ```
///
/// A managed object belongs to one context and may only be used on that context's queue
/// (inside `perform` / `performAndWait`, or on the main queue for a main-queue context).
/// It is not `Sendable`: pass its ``objectID`` between threads instead.
///
/// Equality and hashing are by identity, as for `NSObject`.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The entity of the object (the one its ID names: an object is one allocation without a
    /// second reference to it).
    public var entity: EntityDescription { storedObjectID.entity }
    // Unchecked exclusivity (here and for `contextHandle`): only ever assigned whole, on the
    // object's queue, never passed inout; the checks were a large part of every save's cost.
    @exclusivity(unchecked) private var storedObjectID: ManagedObjectID
    // The three one-byte fields below follow the ID: they fill the 4 bytes its 20 leave before
    // the next 8-byte field (Swift lays out a class's stored properties in declaration order).
    /// Whether the context holds this object strongly because it has pending changes (the
    /// context's bookkeeping, beside the registry; written only by `ObjectGraph`). Queue-owned.
    #if DEBUG
    package var isPendingFlag = false
    #else
    @exclusivity(unchecked) package var isPendingFlag = false
    #endif
    /// Whether the object is in its context's list of changes not processed yet (so that a
    /// second change in one event is not listed twice, and a change to an object that already
    /// has unsaved changes is listed again). Queue-owned.
    #if DEBUG
    package var isUnprocessedFlag = false
    #else
    @exclusivity(unchecked) package var isUnprocessedFlag = false
    #endif
    /// Whether the object is in its context's list of changed objects (see `PendingChanges`).
    /// Queue-owned.
    #if DEBUG
    package var changedListing = ChangedListing.none
    #else
    @exclusivity(unchecked) package var changedListing = ChangedListing.none
    #endif
    /// The context the object is registered in, or `nil` once it is removed or the context is gone.
    public package(set) var managedObjectContext: ManagedObjectContext? {
        get { contextHandle?.context }
        set { contextHandle = newValue?.handle }
    }
    /// Whether the object is registered in `context` (`managedObjectContext === context`, without
    /// taking a reference to the context and releasing it: two atomic operations fewer per object
    /// at each of a save's passes that asks).
    @inline(__always)
    package final func belongs(to context: ManagedObjectContext) -> Bool { contextHandle === context.handle }
    /// Shared by every object of a context; the context clears it when it goes away (one write,
    /// instead of a weak reference per object, which would give every context a side table).
    @exclusivity(unchecked) package var contextHandle: ContextHandle?

    /// The object's ID: temporary until the object is saved, then permanent. An ID assigned
    /// keeps naming the object's own entity (an ID made with its root entity is equal to it).
    public package(set) var objectID: ManagedObjectID {
        // Lent, not copied: reading one of the ID's fields (its key, its store) does not retain
        // and release its entity.
        _read { yield storedObjectID }
        set {
            if newValue.entity === storedObjectID.entity {
                storedObjectID.takeKey(of: newValue)
            } else {
                storedObjectID = newValue.naming(entity)
            }
        }
    }
    /// The object's Observation registrar, made on the first observable read (see
    /// `ObjectObservation`). Queue-owned, assigned once.
    package var observation: ObjectObservation? {
        get { state.observation }
        set { state.observation = newValue }
    }

    /// The object's values, committed row, changes and lifecycle, changed only through the named
    /// transitions of ``ObjectState``. Owned by the object's context queue (or by the thread that
    /// made an object that has no context).
    ///
    /// Release builds skip the run-time exclusivity check of this property (and of the context's
    /// `graph`): it cost 17 % of the instructions of "update one attribute of N + save" (a check
    /// per read of any flag). One queue owns the object and no method holds an access to it
    /// across a call that could reach it again; debug builds, which run the tests, keep checking.
    #if DEBUG
    package var state: ObjectState
    #else
    @exclusivity(unchecked) package var state: ObjectState
    #endif

    /// Current values, in the entity's slot order; meaningless while `isFaultFlag` is set.
    package var values: [ManagedValue] { state.values }
    /// The committed row this object was read from or last saved as; `nil` for new objects.
    package var snapshot: RowSnapshot? { state.snapshot }
    /// Slots written since the last save or fetch.
    package var dirty: DirtySlots { state.dirty }
    /// Whether any slot is marked written (`!dirty.isEmpty`, without building the set).
    package var hasDirtySlots: Bool { state.hasDirtySlots }
    /// The to-many relationships, in `entity.toManyRelationships` order; empty until one is used.
    package var toMany: [ToManyState] {
        get { state.toMany }
        _modify { yield &state.toMany }
    }
    package var isFaultFlag: Bool { state.isFault }
    package var isInsertedFlag: Bool { state.isInserted }
    package var isDeletedFlag: Bool { state.isDeleted }
    /// Set when the object was a fault that could not be fulfilled and now reads as deleted
    /// (see `ManagedObjectContext.shouldDeleteInaccessibleFaults`); its values are not the store's.
    package var isInaccessibleFlag: Bool { state.isInaccessible }

    /// Makes an object of `entity` and inserts it into `context` (when given). This is the
    /// designated initializer, as in Core Data; subclasses that override it must call super.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        if !entity.isFrozen { entity.freeze() }
        if context != nil {
            precondition(!entity.isAbstract, """
                The entity \(entity.name) is abstract: insert objects of one of its sub-entities \
                (\(entity.subentities.map(\.name).sorted().joined(separator: ", "))) instead.
                """)
        }
        self.storedObjectID = .temporary(entity)
        self.state = ObjectState(defaults: entity.defaultValues)
        if let context { context.insert(self) }
    }

    /// Makes a new object of this class's entity and inserts it into `context`.
    ///
    /// The context's model must contain an entity for this class; using a class the model does
    /// not know is a programmer error and traps with a message saying so.
    public convenience init(context: ManagedObjectContext) {
        guard let entity = context.entity(forClass: Self.self) else {
            preconditionFailure("""
                The model of context '\(context.debugName)' has no entity for the class \(Self.self). Add \
                \(Self.self).self to the ManagedObjectModel.
                """)
        }
        self.init(entity: entity, insertInto: context)
    }

    /// Made by contexts for objects read from a store.
    package static func materialize(entity: EntityDescription, id: ManagedObjectID, context: ManagedObjectContext,
                                    snapshot: RowSnapshot?) -> ManagedObject {
        let object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
        object.objectID = id
        object.managedObjectContext = context
        if let snapshot {
            object.state.fulfil(with: snapshot)
        } else {
            object.state.becomeFault()
        }
        return object
    }

    // MARK: - Validation (overridable; see ManagedObject+Validation.swift)

    /// Checks the object before its insert is saved: mandatory properties (1570), bounds and
    /// patterns (1610–1680), relationship counts (1580, 1590). Throws one ``CoreDataError``, or
    /// 1560 with several in `underlyingErrors`. Override to add checks; call `super`.
    open func validateForInsert() throws {
        try Self.throwing(propertyValidationErrors())
    }

    /// Checks the object before its changes are saved (the same checks as for an insert).
    /// Override to add checks; call `super`.
    open func validateForUpdate() throws {
        try Self.throwing(propertyValidationErrors())
    }

    /// Checks the object before its delete is saved: a relationship with the deny rule that
    /// still has destinations refuses it (1600). Override to add checks; call `super`.
    open func validateForDelete() throws {
        try Self.throwing(denyRuleErrors())
    }

    // MARK: - Lifecycle (overridable; when each runs: docs/Porting.md)

    /// Called once in the object's life, when it is first inserted into a context (by
    /// ``init(entity:insertInto:)`` with a context, ``init(context:)`` or
    /// ``ManagedObjectContext/insert(_:)``); not again after undo and redo, nor when a child
    /// context's save pushes the insert into its parent. Set initial values here; values set with
    /// ``setPrimitiveValue(_:forKey:)`` are part of the insert and are not undoable. Call `super`.
    open func awakeFromInsert() {}

    /// Called after the object's values are loaded from the store (a fetch, or a fault being
    /// fulfilled). Changes are not tracked while it runs: values set here (with setters or
    /// primitive setters) are not changes, are not saved unless changed again later, and do not
    /// register undo. Call `super`.
    open func awakeFromFetch() {}

    /// Called for each inserted, updated and deleted object (check ``isDeleted``) at the start of
    /// a save, before validation. Values changed here with setters are saved with the rest, and
    /// the objects they change get `willSave` in turn; a `willSave` that changes something on
    /// every call makes the save fail with 134030 after 100 rounds instead of looping forever.
    /// Call `super`.
    open func willSave() {}

    /// Called for each saved object (deleted ones included) after the save is complete and before
    /// the did-save notification is posted. Changes made here are new unsaved changes. Call `super`.
    open func didSave() {}

    /// Called when the object's deletion is processed, before the delete rules change its
    /// relationships (at the end of the event, in ``ManagedObjectContext/processPendingChanges()``,
    /// or at save when ``ManagedObjectContext/propagatesDeletesAtEndOfEvent`` is `false`); its
    /// values and relationships are still readable. Call `super`.
    open func prepareForDeletion() {}

    /// Called before the object turns into a fault (a refresh without merging, a rollback of a
    /// deletion); its values are still readable. Call `super`.
    open func willTurnIntoFault() {}

    /// Called after the object turned into a fault; its values (transient ones too) are gone and
    /// load again on next use. Not called at deallocation (Core Data does). Call `super`.
    open func didTurnIntoFault() {}

    // MARK: - State

    /// Whether the object was inserted and not saved yet.
    public var isInserted: Bool { isInsertedFlag && !isDeletedFlag }
    /// Whether the object has unsaved changes to its values (and was not inserted or deleted).
    public var isUpdated: Bool { state.isUpdated }
    /// Whether the object will be deleted at the next save.
    public var isDeleted: Bool { isDeletedFlag }
    /// Whether the object's values have not been loaded yet.
    public var isFault: Bool { isFaultFlag }

    /// 0 when the object's values are loaded, 1 while it is a fault (its values not read or
    /// turned out again). Mirrors `faultingState`, whose only documented value is 0 for a fully
    /// realized object.
    public var faultingState: Int { isFaultFlag ? 1 : 0 }
    /// Whether the object has unsaved changes (inserted, updated or deleted).
    public var hasChanges: Bool { state.hasChanges }
    /// Whether some persistent property (an attribute or relationship that is saved) no longer
    /// has its last saved value. Transient attributes do not count, and relationships that are
    /// faults are not loaded to find out.
    public var hasPersistentChangedValues: Bool {
        if isInsertedFlag || isDeletedFlag { return true }
        guard !isFaultFlag else { return false }
        let committed = snapshot?.values
        for slot in dirty.slots {
            if slot >= entity.valueSlotCount { return true }    // a to-many relationship changed
            guard let committed, slot < committed.count else { return true }
            if committed[slot] != values[slot] { return true }   // every slot is persistent
        }
        return false
    }

    // MARK: - Identity

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        let state = isFaultFlag ? " <fault>" : ""
        return "<\(type(of: self)): \(objectID.uriRepresentation().absoluteString)>\(state)"
    }
}


// Managed objects are confined to their context's queue, like NSManagedObject: explicitly not
// Sendable. An unavailable conformance rather than none, so that a subclass cannot declare itself
// Sendable either (Swift ignores the claim with a warning). Swift 6 then refuses to compile every
// hand-off of an object to another task, thread or actor (Tests/CompileFailures); pass `objectID`,
// which is Sendable, instead.
@available(*, unavailable, message: "Managed objects belong to one context's queue; pass objectID between threads instead")
extension ManagedObject: Sendable {}
