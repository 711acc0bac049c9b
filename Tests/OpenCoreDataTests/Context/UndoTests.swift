import OpenCoreData
import Testing

@Suite struct UndoTests {
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
}
