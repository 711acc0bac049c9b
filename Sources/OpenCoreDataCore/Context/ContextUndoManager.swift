/// Undo and redo for one context's changes: attribute values, inserts and deletes, grouped per
/// event (a group closes at each `processPendingChanges()`, which `perform` calls after every
/// block). Linux Foundation has no `UndoManager`; this is the part of it Core Data uses, and the
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
    enum Record {
        case value(ManagedObject, slot: Int, old: ManagedValue, new: ManagedValue)
        case insert(ManagedObject)
        case delete(ManagedObject)
    }

    private var open: [Record] = []
    private var undoStack: [[Record]] = []
    private var redoStack: [[Record]] = []
    /// Set while undoing or redoing: the changes made then are not recorded again.
    private var isReplaying = false
    /// Weak: the context owns its undo manager, and an undo manager kept after its context is
    /// gone must find no context (undo then does nothing), never a freed one.
    weak var context: ManagedObjectContext?

    /// How many groups are kept (0: unlimited).
    public var levelsOfUndo: Int = 0

    /// Makes an undo manager; assign it to a context's `undoManager`.
    public init() {}

    /// Whether there is a group to undo (including changes not yet grouped).
    public var canUndo: Bool { !open.isEmpty || !undoStack.isEmpty }
    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Undoes the last group of changes.
    public func undo() {
        closeGroup()
        guard let group = undoStack.popLast(), let context else { return }
        replay {
            for record in group.reversed() {
                switch record {
                case .value(let object, let slot, let old, _): object.writeValue(old, slot: slot)
                case .insert(let object): context.delete(object)
                case .delete(let object): context.undelete(object)
                }
            }
        }
        context.processPendingChanges()
        redoStack.append(group)
    }

    /// Redoes the last undone group.
    public func redo() {
        guard let group = redoStack.popLast(), let context else { return }
        replay {
            for record in group {
                switch record {
                case .value(let object, let slot, _, let new): object.writeValue(new, slot: slot)
                case .insert(let object): context.insert(object)
                case .delete(let object): context.delete(object)
                }
            }
        }
        context.processPendingChanges()
        undoStack.append(group)
    }

    /// Forgets every recorded change.
    public func removeAllActions() {
        open.removeAll()
        undoStack.removeAll()
        redoStack.removeAll()
    }

    func record(_ record: Record) {
        guard !isReplaying else { return }
        open.append(record)
    }

    /// Ends the current group (at the end of an event).
    func closeGroup() {
        guard !open.isEmpty else { return }
        undoStack.append(open)
        open.removeAll()
        redoStack.removeAll()
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    private func replay(_ body: () -> Void) {
        isReplaying = true
        body()
        isReplaying = false
    }
}

// Managed objects are confined to their context's queue, and so is the undo manager that holds them.
@available(*, unavailable)
extension ContextUndoManager: Sendable {}
