import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct UndoTests {
    @Test func thereIsNoUndoManagerByDefault() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        #expect(context.performAndWait { context.undoManager } == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func undoAndRedoAttributeChangesInsertsAndDeletesPerEvent(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            context.undoManager = UndoManager()
            let note = Note(context: context)
            note.text1 = "first"
            context.processPendingChanges()                  // event 1: insert + first value
            try context.save()
            note.text1 = "second"
            note.text2 = "also"
            context.processPendingChanges()                  // event 2: two changes, one group
            note.text1 = "third"
            context.processPendingChanges()                  // event 3

            context.undo()
            #expect(note.text1 == "second" && note.text2 == "also")
            context.undo()
            #expect(note.text1 == "first" && note.text2 == nil)
            #expect(context.undoManager?.canRedo == true)
            context.redo()
            #expect(note.text1 == "second" && note.text2 == "also")

            context.delete(note)
            context.processPendingChanges()
            #expect(note.isDeleted)
            context.undo()
            #expect(!note.isDeleted)
            try context.save()
            #expect(try context.count(for: Note.fetchRequest()) == 1)

            let draft = Note(context: context)
            context.processPendingChanges()
            context.undo()
            #expect(draft.managedObjectContext == nil)
            #expect(context.insertedObjects.isEmpty)
            context.redo()
            #expect(context.insertedObjects == [draft])
            try context.save()
            #expect(try context.count(for: Note.fetchRequest()) == 2)
        }
    }

    /// The context goes first (released by its owner) while the app keeps the undo manager:
    /// undo and redo then find no context and change nothing, rather than touch freed memory.
    @Test func anUndoManagerThatOutlivesItsContextDoesNothing() throws {
        let stack = try TestStack(.inMemory)
        let manager = UndoManager()
        weak var released: ManagedObjectContext?
        var kept: Note?
        do {
            let context = stack.container.newBackgroundContext()
            released = context
            context.performAndWait {
                context.undoManager = manager
                let note = Note(context: context)
                note.text1 = "recorded"
                context.processPendingChanges()
                kept = note
            }
        }
        #expect(released == nil)
        #expect(manager.canUndo)
        manager.undo()
        manager.redo()
        #expect(kept?.text1 == "recorded")
        #expect(kept?.managedObjectContext == nil)
    }

    /// Relationships are undone with their inverses: a to-one, a many-to-many member, and the
    /// links a delete's nullify rule cut, all come back with the object.
    @Test(arguments: StoreKind.allCases)
    func undoRestoresRelationshipsOnBothEnds(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Probe.self, Label.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            context.undoManager = UndoManager()
            let red = Label(context: context)
            red.name = "red"
            let blue = Label(context: context)
            blue.name = "blue"
            let probe = Probe(context: context)
            probe.code = "p"
            try context.save()
            context.processPendingChanges()

            probe.owner = red
            probe.labels.insert(blue)
            context.processPendingChanges()
            context.undo()
            #expect(probe.owner == nil && probe.labels.isEmpty)
            #expect(red.owned.isEmpty && blue.probes.isEmpty)
            context.redo()
            #expect(probe.owner == red && probe.labels == [blue])
            #expect(red.owned == [probe] && blue.probes == [probe])
            try context.save()

            context.delete(probe)
            context.processPendingChanges()
            #expect(red.owned.isEmpty && blue.probes.isEmpty)
            context.undo()
            #expect(!probe.isDeleted)
            #expect(probe.owner == red && probe.labels == [blue])
            #expect(red.owned == [probe] && blue.probes == [probe])
            #expect(context.invariantViolations().isEmpty)
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let probes = try reader.fetch(Probe.fetchRequest())
            #expect(probes.count == 1)
            #expect(probes.first?.owner?.name == "red")
            #expect(probes.first?.labels.map(\.name) == ["blue"])
        }
    }

    /// An undone change is no change any more: a merge does not keep it over a newer row. Undone
    /// after a save, the old value is a change to save.
    @Test(arguments: StoreKind.allCases)
    func anUndoneChangeIsGoneAndAnUndoAfterASaveIsSaved(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let other = stack.container.newBackgroundContext()
        let id = try context.performAndWait { () throws -> ManagedObjectID in
            context.undoManager = UndoManager()
            let note = Note(context: context)
            note.text1 = "saved"
            try context.save()
            context.processPendingChanges()
            note.text1 = "undone"
            context.processPendingChanges()
            context.undo()
            return note.objectID
        }
        let notification = try other.performAndWait { () throws -> Notification in
            let recorder = NotificationRecorder()
            let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { recorder.append($0) }
            defer { NotificationCenter.default.removeObserver(observer) }
            (try other.existingObject(with: id) as! Note).text1 = "elsewhere"
            try other.save()
            return recorder.values[0]
        }
        try context.performAndWait { () throws in
            context.mergeChanges(fromContextDidSave: notification)
            let note = context.object(with: id) as! Note
            #expect(note.text1 == "elsewhere")
            #expect(!note.hasChanges)

            note.text1 = "then"
            context.processPendingChanges()
            try context.save()
            context.undo()
            #expect(note.text1 == "elsewhere")
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        #expect(try reader.performAndWait { (try reader.existingObject(with: id) as! Note).text1 } == "elsewhere")
    }

    /// `rollback()` and `reset()` empty the undo manager, as Core Data's do: nothing recorded
    /// before them can be replayed on objects they discarded.
    @Test func rollbackAndResetForgetWhatCouldBeUndone() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        context.performAndWait {
            context.undoManager = UndoManager()
            let note = Note(context: context)
            note.text1 = "draft"
            context.processPendingChanges()
            context.rollback()
            #expect(context.undoManager?.canUndo == false)
            _ = Note(context: context)
            context.processPendingChanges()
            context.reset()
            #expect(context.undoManager?.canUndo == false && context.undoManager?.canRedo == false)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func undoingPastASavedDeletionSkipsTheObjectThatLeft(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            context.undoManager = UndoManager()
            let note = Note(context: context)
            note.text1 = "kept a while"
            context.processPendingChanges()                  // event 1: the insert
            try context.save()
            context.delete(note)
            context.processPendingChanges()                  // event 2: the delete
            try context.save()                               // the object leaves the context
            context.undo()                                   // its row is gone: nothing to take back
            context.undo()                                   // nor to delete again (this trapped)
            #expect(note.managedObjectContext == nil)
            #expect(try context.count(for: Note.fetchRequest()) == 0)
            #expect(context.hasChanges == false)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDeletionTakenBackAfterTheRowWasDeletedElsewhereDoesNotBringTheObjectBack(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let other = stack.container.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = true
        let request = Note.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        let note = try context.performAndWait { () throws in
            context.undoManager = UndoManager()
            let note = Note(context: context)
            try context.save()
            try controller.performFetch()
            context.delete(note)
            context.processPendingChanges()
            return note
        }
        try other.performAndWait { () throws in
            other.delete(other.object(with: context.performAndWait { note.objectID }))
            try other.save()
        }
        try context.performAndWait { () throws in
            context.undo()                                   // the local deletion, after the merged one
            #expect(try context.fetch(Note.fetchRequest()).isEmpty)
            #expect(controller.fetchedObjects?.isEmpty == true)
            #expect(try context.count(for: Note.fetchRequest()) == 0)
            try context.save()                               // nothing to write, no conflict
            context.rollback()
            #expect(try context.fetch(Note.fetchRequest()).isEmpty)
        }
    }

    /// Explicit groups span events and nest; registration can be switched off; groups carry
    /// action names; with `groupsByEvent` off, events do not close groups.
    @Test func groupingRegistrationAndActionNamesAsFoundationsUndoManager() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let undo = UndoManager()
            context.undoManager = undo
            let note = Note(context: context)
            note.text1 = "start"
            try context.save()
            undo.removeAllActions()

            note.text1 = "before the group"
            undo.beginUndoGrouping()                       // the change before is a group of its own
            note.text1 = "one"
            context.processPendingChanges()
            undo.beginUndoGrouping()                       // nested: folds into the outer group
            note.text2 = "two"
            context.processPendingChanges()
            undo.endUndoGrouping()
            #expect(undo.groupingLevel == 1)
            note.text3 = "three"
            context.processPendingChanges()
            undo.setActionName("Edit All")
            undo.endUndoGrouping()
            #expect(undo.undoActionName == "Edit All")

            undo.disableUndoRegistration()
            #expect(!undo.isUndoRegistrationEnabled)
            note.id = 42                                   // not recorded: cannot be undone
            context.processPendingChanges()
            undo.enableUndoRegistration()

            context.undo()                                 // the whole explicit group
            #expect(note.text1 == "before the group" && note.text2 == nil && note.text3 == nil)
            #expect(note.id == 42)
            #expect(undo.redoActionName == "Edit All")
            context.undo()
            #expect(note.text1 == "start")
            context.redo()
            context.redo()
            #expect(note.text1 == "one" && note.text2 == "two" && note.text3 == "three")

            undo.removeAllActions()
            undo.groupsByEvent = false                      // events no longer close groups
            note.text1 = "a"
            context.processPendingChanges()
            note.text2 = "b"
            context.processPendingChanges()
            context.undo()
            #expect(note.text1 == "one" && note.text2 == "two")
        }
    }
}
