import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ObjectLifecycleTests {
    @Test(arguments: StoreKind.allCases)
    func insertingGivesATemporaryIDAndSavingAPermanentOne(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            #expect(note.isInserted && note.hasChanges && !note.isUpdated && !note.isDeleted)
            #expect(note.managedObjectContext === context)
            #expect(note.entity.name == "Note")
            #expect(note.objectID.isTemporaryID)
            let temporary = note.objectID.uriRepresentation().absoluteString
            #expect(temporary.hasPrefix("x-coredata:///Note/t"))
            #expect(context.insertedObjects == [note])
            #expect(context.hasChanges)
            try context.save()
            #expect(!note.isInserted && !note.hasChanges && !context.hasChanges)
            #expect(!note.objectID.isTemporaryID)
            let store = stack.container.persistentStoreCoordinator.persistentStores[0]
            #expect(note.objectID.uriRepresentation().absoluteString == "x-coredata://\(store.identifier)/Note/p1")
            #expect(context.registeredObject(for: note.objectID) === note)
        }
    }

    /// Inserting an object that is already in the context is no second insert: a saved object
    /// stays one row, and an unsaved insert deleted since is inserted again.
    @Test(arguments: StoreKind.allCases)
    func insertingAnObjectAlreadyInTheContextAddsNoRow(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let saved = Note(context: context)
            saved.id = 1
            try context.save()
            context.insert(saved)
            #expect(!saved.isInserted && !saved.hasChanges && !context.hasChanges)
            let fresh = Note(context: context)
            fresh.id = 2
            context.delete(fresh)
            #expect(!fresh.isInserted && fresh.isDeleted)
            context.insert(fresh)
            #expect(fresh.isInserted && !fresh.isDeleted)
            try context.save()
            let ids = try context.fetch(FetchRequest<Note>(entityName: "Note")).map(\.id).sorted()
            #expect(ids == [1, 2])
        }
    }

    @Test func uriRepresentationsRoundTripThroughTheCoordinator() throws {
        let stack = try TestStack(.sqlite)
        let coordinator = stack.container.persistentStoreCoordinator
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            let temporaryID = note.objectID
            #expect(coordinator.managedObjectID(forURIRepresentation: temporaryID.uriRepresentation()) == temporaryID)
            try context.save()
            let uri = note.objectID.uriRepresentation()
            #expect(coordinator.managedObjectID(forURIRepresentation: uri) == note.objectID)
            for bad in ["x-coredata://someone-else/Note/p1", "x-coredata://\(uri.host ?? "")/Nope/p1", "https://example.com/Note/p1", "x-coredata://\(uri.host ?? "")/Note/q1"] {
                #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: bad)!) == nil)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectWithIDIsAFaultUntilUsed(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let writer = stack.container.newBackgroundContext()
        let id = try writer.performAndWait { () throws in
            let note = Note(context: writer)
            note.id = 42
            note.text1 = "hello"
            try writer.save()
            return note.objectID
        }
        let reader = stack.container.newBackgroundContext()
        reader.performAndWait {
            #expect(reader.registeredObject(for: id) == nil)
            let object = reader.object(with: id)
            #expect(object.isFault)
            #expect(reader.registeredObject(for: id) === object)
            let note = object as? Note
            #expect(note?.text1 == "hello")
            #expect(!object.isFault)
            #expect(reader.object(with: id) === object)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func existingObjectThrows133000WhenTheRowIsGone(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            try context.save()
            let id = note.objectID
            #expect(try context.existingObject(with: id) === note)
            context.delete(note)
            try context.save()
            let error = #expect(throws: CoreDataError.self) { try context.existingObject(with: id) }
            #expect(error?.code == .managedObjectReferentialIntegrity)
            #expect(error?.code.rawValue == 133000)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changedAndCommittedValues(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            note.id = 1
            note.text1 = "first"
            #expect(note.changedValues()["text1"] as? String == "first")
            #expect(note.committedValues(forKeys: nil).isEmpty)
            try context.save()
            #expect(note.changedValues().isEmpty)
            note.text1 = "second"
            #expect(note.isUpdated)
            #expect(context.updatedObjects == [note])
            #expect(note.changedValues().count == 1)
            #expect(note.changedValues()["text1"] as? String == "second")
            #expect(note.committedValues(forKeys: ["text1"])["text1"] as? String == "first")
            #expect(note.committedValues(forKeys: ["text2"])["text2"] is NSNull)
        }
    }

    /// `changedValuesForCurrentEvent()` as Core Data code reads it in an objects-did-change
    /// handler: the properties changed since the last notification, with the values they had at
    /// that notification (the committed ones after a save, the initial ones for a new object).
    @Test(arguments: StoreKind.allCases)
    func changedValuesForTheCurrentEventAreTheValuesAtTheLastNotification(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        /// The dictionary as "key=value" lines, nil values as "nil".
        @Sendable func summary(_ values: [String: Any]) -> String {
            values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value is NSNull ? "nil" : "\($0.value)")" }.joined(separator: " ")
        }
        try context.performAndWait { () throws in
            let note = Note(context: context)
            note.id = 1
            note.text1 = "first"
            #expect(summary(note.changedValuesForCurrentEvent()) == "id=0 text1=nil")
            try context.save()
            #expect(note.changedValuesForCurrentEvent().isEmpty)
            let id = note.objectID
            let seen = Recorder<String>()
            let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { _ in
                // Delivered on the context's queue, inside processPendingChanges().
                seen.append(summary(context.registeredObject(for: id)?.changedValuesForCurrentEvent() ?? [:]))
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            note.text1 = "second"
            context.processPendingChanges()
            #expect(seen.values.last == "text1=first")
            note.text1 = "third"
            note.text2 = "added"
            context.processPendingChanges()
            #expect(seen.values.last == "text1=second text2=nil")
            // changedValues() counts from the save, with the new values.
            #expect(summary(note.changedValues()) == "text1=third text2=added")
            #expect(note.changedValuesForCurrentEvent().isEmpty)
            context.rollback()
            note.text2 = "again"
            #expect(summary(note.changedValuesForCurrentEvent()) == "text2=nil")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackDiscardsEveryUnsavedChange(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let kept = Note(context: context)
            kept.text1 = "saved"
            let doomed = Note(context: context)
            doomed.text1 = "doomed"
            try context.save()
            kept.text1 = "changed"
            context.delete(doomed)
            let fresh = Note(context: context)
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            #expect(kept.text1 == "saved")
            #expect(!doomed.isDeleted)
            #expect(fresh.managedObjectContext == nil)
            #expect(try context.count(for: Note.fetchRequest()) == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func resetForgetsEveryObject(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            try context.save()
            _ = Note(context: context)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
            #expect(note.managedObjectContext == nil)
            #expect(try context.count(for: Note.fetchRequest()) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnInsertedObjectForgetsItAndDeletingASavedOneRemovesTheRow(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let saved = Note(context: context)
            try context.save()
            let inserted = Note(context: context)
            context.delete(inserted)
            context.processPendingChanges()
            #expect(inserted.managedObjectContext == nil)
            #expect(context.insertedObjects.isEmpty)
            context.delete(saved)
            #expect(saved.isDeleted)
            #expect(context.deletedObjects == [saved])
            #expect(try context.fetch(Note.fetchRequest()).isEmpty)
            try context.save()
            #expect(try context.count(for: Note.fetchRequest()) == 0)
        }
    }

    @Test func unchangedObjectsAreHeldWeaklyAndChangedOnesStrongly() throws {
        let stack = try TestStack(.sqlite)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for i in 0..<2 {
                let note = Note(context: context)
                note.id = Int32(i)
            }
            try context.save()
            context.reset()
            var ids: [ManagedObjectID] = []
            do {
                let notes = try context.fetch(Note.fetchRequest())
                ids = notes.map(\.objectID)
                notes[1].text1 = "changed"
            }
            #expect(context.registeredObject(for: ids[0]) == nil)
            let changed = context.registeredObject(for: ids[1]) as? Note
            #expect(changed?.text1 == "changed")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func obtainPermanentIDsBeforeSaving(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let notes = (0..<3).map { _ in Note(context: context) }
            try context.obtainPermanentIDs(for: notes)
            #expect(notes.allSatisfy { !$0.objectID.isTemporaryID })
            let ids = notes.map(\.objectID)
            try context.save()
            #expect(notes.map(\.objectID) == ids)
            #expect(context.registeredObject(for: ids[0]) === notes[0])
        }
    }
}
