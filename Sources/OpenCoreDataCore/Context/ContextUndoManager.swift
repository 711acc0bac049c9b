/// Undo and redo for one context's changes: attribute values, inserts and deletes, grouped per
/// event (a group closes at each `processPendingChanges()`, which `perform` calls after every
/// block) unless ``groupsByEvent`` is off or an explicit group is open
/// (``beginUndoGrouping()`` … ``endUndoGrouping()``, which may span several events). Linux
/// Foundation has no `UndoManager`; this is the part of it Core Data uses, and the
/// `OpenCoreData` module calls it `UndoManager` where Foundation has none.
///
/// ```swift
/// context.undoManager = ContextUndoManager()
/// note.text1 = "draft"
/// context.processPendingChanges()
/// context.undo()          // text1 is back to its old value
/// context.redo()
/// ```
///
/// Use it on its context's queue.
public final class ContextUndoManager {
    /// One change of the graph, as it was made: both ends of a relationship record their own
    /// change (the graph keeps inverses by changing the other end), so replaying records one by
    /// one, without inverse maintenance, keeps every relationship consistent.
    enum Record {
        /// An attribute or a to-one relationship slot, and whether it had a change before.
        case value(ManagedObject, slot: Int, old: ManagedValue, new: ManagedValue, wasChanged: Bool)
        /// A member added to (or removed from) the to-many at `toMany` (its index in the entity's
        /// to-many relationships).
        case member(ManagedObject, toMany: Int, ManagedObjectID, added: Bool)
        /// The members of an ordered to-many put in a new order.
        case order(ManagedObject, toMany: Int, old: [ManagedObjectID], new: [ManagedObjectID])
        case insert(ManagedObject)
        case delete(ManagedObject)
    }

    /// One group of changes, undone and redone together, and the action name it was given.
    private struct Group {
        var records: [Record]
        var name: String
    }

    private var open: [Record] = []
    /// The name ``setActionName(_:)`` gave the group being recorded.
    private var openName = ""
    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// How many ``disableUndoRegistration()`` calls are not balanced yet.
    private var disabledCount = 0
    /// Set while undoing or redoing: the changes made then are not recorded again.
    private var isReplaying = false
    /// Weak: the context owns its undo manager, and an undo manager kept after its context is
    /// gone must find no context (undo then does nothing), never a freed one.
    weak var context: ManagedObjectContext?

    /// How many groups are kept (0: unlimited).
    public var levelsOfUndo: Int = 0

    /// Whether each event of the context (each `processPendingChanges()`) closes a group
    /// (`true`, the default). When `false`, changes gather until ``endUndoGrouping()`` or
    /// ``undo()``.
    public var groupsByEvent = true

    /// How many explicit groups are open (``beginUndoGrouping()`` calls not ended yet).
    public private(set) var groupingLevel = 0

    /// Whether changes are recorded (no ``disableUndoRegistration()`` is in force).
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// Makes an undo manager; assign it to a context's `undoManager`.
    public init() {}

    /// Whether there is a group to undo (including changes not yet grouped).
    public var canUndo: Bool { !open.isEmpty || !undoStack.isEmpty }
    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// The name of the group ``undo()`` would undo (empty when it has none).
    public var undoActionName: String { open.isEmpty ? undoStack.last?.name ?? "" : openName }
    /// The name of the group ``redo()`` would redo (empty when it has none).
    public var redoActionName: String { redoStack.last?.name ?? "" }

    /// Undoes the last group of changes. An explicit group still open at the outermost level is
    /// ended first (as Foundation's undo manager does); undoing inside nested groups is a
    /// programmer error and traps.
    public func undo() {
        precondition(groupingLevel <= 1, "undo() was called inside \(groupingLevel) nested undo groups: end them with endUndoGrouping() first.")
        groupingLevel = 0
        closeGroup()
        guard let group = undoStack.popLast(), let context else { return }
        replay(group.records.reversed(), in: context, undoing: true)
        redoStack.append(group)
    }

    /// Redoes the last undone group.
    public func redo() {
        guard let group = redoStack.popLast(), let context else { return }
        replay(group.records, in: context, undoing: false)
        undoStack.append(group)
    }

    /// Forgets every recorded change (open groups included).
    public func removeAllActions() {
        open.removeAll()
        openName = ""
        undoStack.removeAll()
        redoStack.removeAll()
        groupingLevel = 0
    }

    /// Opens a group: the changes until the matching ``endUndoGrouping()`` are undone together,
    /// whatever events they span. Changes recorded before it form a group of their own. Groups
    /// nest; only the outermost one becomes a group of its own. Mirrors `beginUndoGrouping()`.
    public func beginUndoGrouping() {
        if groupingLevel == 0 { closeGroup() }
        groupingLevel += 1
    }

    /// Closes the group the last ``beginUndoGrouping()`` opened. Ending a group that was never
    /// begun is a programmer error and traps, as in Foundation. Mirrors `endUndoGrouping()`.
    public func endUndoGrouping() {
        precondition(groupingLevel > 0, "endUndoGrouping() was called without a matching beginUndoGrouping().")
        groupingLevel -= 1
        if groupingLevel == 0 { closeGroup() }
    }

    /// Stops recording changes until the matching ``enableUndoRegistration()`` (calls nest): the
    /// changes made meanwhile cannot be undone. Mirrors `disableUndoRegistration()`.
    public func disableUndoRegistration() {
        disabledCount += 1
    }

    /// Balances one ``disableUndoRegistration()``; one without a match is a programmer error and
    /// traps, as in Foundation. Mirrors `enableUndoRegistration()`.
    public func enableUndoRegistration() {
        precondition(disabledCount > 0, "enableUndoRegistration() was called without a matching disableUndoRegistration().")
        disabledCount -= 1
    }

    /// Names the group being recorded (the last closed one when nothing is being recorded), for
    /// menus ("Undo Rename"). Mirrors `setActionName(_:)`.
    public func setActionName(_ name: String) {
        if open.isEmpty && groupingLevel == 0, !undoStack.isEmpty {
            undoStack[undoStack.count - 1].name = name
        } else {
            openName = name
        }
    }

    func record(_ record: Record) {
        guard !isReplaying, disabledCount == 0 else { return }
        open.append(record)
    }

    /// The end of one of the context's events: closes the group unless an explicit group is open
    /// or ``groupsByEvent`` is off.
    func endEvent() {
        if groupsByEvent && groupingLevel == 0 { closeGroup() }
    }

    /// Ends the group being recorded.
    private func closeGroup() {
        guard !open.isEmpty else { return }
        undoStack.append(Group(records: open, name: openName))
        open.removeAll()
        openName = ""
        redoStack.removeAll()
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Applies a group's records (their old side when undoing, their new side when redoing), then
    /// processes the changes, none of it recorded again.
    private func replay(_ records: some Sequence<Record>, in context: ManagedObjectContext, undoing: Bool) {
        isReplaying = true
        defer { isReplaying = false }
        for record in records where isReplayable(record, in: context) {
            switch record {
            case .value(let object, let slot, let old, let new, let wasChanged):
                if undoing { object.restoreValue(old, slot: slot, changed: wasChanged) } else { object.writeValue(new, slot: slot) }
            case .member(let object, let index, let id, let added):
                context.replayMembership(of: id, in: object, toMany: index, present: added != undoing)
            case .order(let object, let index, let old, let new):
                context.replayOrder(undoing ? old : new, of: object, toMany: index)
            case .insert(let object):
                if undoing {
                    context.delete(object)
                    object.state.prepareDeletion()    // taking an insert back is no deletion: no prepareForDeletion
                } else {
                    context.insert(object)
                }
            case .delete(let object):
                if undoing { context.undelete(object) } else { context.delete(object) }
            }
        }
        context.processPendingChanges()
    }

    /// Whether a record's object is still this context's to change: an object whose deletion
    /// was saved (here or merged from elsewhere) has left the context and its row the store, so
    /// what was recorded of it is skipped. An object inserted and then deleted before any save
    /// is only detached, and undoing the deletion brings it back.
    private func isReplayable(_ record: Record, in context: ManagedObjectContext) -> Bool {
        let object: ManagedObject
        switch record {
        case .value(let target, _, _, _, _), .member(let target, _, _, _), .order(let target, _, _, _), .insert(let target), .delete(let target):
            object = target
        }
        if object.belongs(to: context) { return true }
        return object.managedObjectContext == nil && object.isInsertedFlag
    }
}

// Managed objects are confined to their context's queue, and so is the undo manager that holds them.
@available(*, unavailable)
extension ContextUndoManager: Sendable {}
