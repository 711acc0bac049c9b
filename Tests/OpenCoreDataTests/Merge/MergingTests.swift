import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Sets text1 of a note and saves, on the saving context's queue.
private func save(_ text: String, on saver: ManagedObjectContext, id: ManagedObjectID) throws {
    try saver.performAndWait { () throws in
        (saver.object(with: id) as? Note)?.text1 = text
        try saver.save()
    }
}

@Suite(.dedicatedThread) struct MergingTests {
    /// Two contexts on one store, with one saved note registered in both (the receiver's copy is
    /// returned: registered objects nobody references are dropped, as with weak references).
    private func twoContexts(_ kind: StoreKind) throws -> (TestStack, ManagedObjectContext, ManagedObjectContext, ManagedObjectID, Note?) {
        let stack = try TestStack(kind)
        let saver = stack.container.newBackgroundContext()
        let id = try saver.performAndWait { () throws in
            let note = Note(context: saver)
            note.text1 = "v1"
            try saver.save()
            return note.objectID
        }
        let receiver = stack.container.newBackgroundContext()
        let copy = try receiver.performAndWait { try receiver.existingObject(with: id) } as? Note
        return (stack, saver, receiver, id, copy)
    }

    @Test(arguments: StoreKind.allCases)
    func mergingADidSaveRefreshesKeepsLocalChangesRegistersInsertsAndDeletes(kind: StoreKind) throws {
        let (stack, saver, receiver, id, held) = try twoContexts(kind)
        let doomedID = try saver.performAndWait { () throws in
            let doomed = Note(context: saver)
            try saver.save()
            return doomed.objectID
        }
        let doomedCopy = try receiver.performAndWait { try receiver.existingObject(with: doomedID) }
        let receivedNote = held
        receiver.performAndWait { receivedNote?.text2 = "local" }
        let notifications = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: saver, queue: nil) {
            notifications.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let insertedID = try saver.performAndWait { () throws in
            (saver.object(with: id) as? Note)?.text1 = "v2"
            saver.delete(saver.object(with: doomedID))
            let fresh = Note(context: saver)
            fresh.text1 = "new"
            try saver.save()
            return fresh.objectID
        }
        let notification = try #require(notifications.values.first)
        try receiver.performAndWait { () throws in
            #expect(receivedNote?.text1 == "v1")       // not merged automatically
            receiver.mergeChanges(fromContextDidSave: notification)
            #expect(receivedNote?.text1 == "v2")
            #expect(receivedNote?.text2 == "local")
            #expect(receivedNote?.isUpdated == true)
            let inserted = receiver.object(with: insertedID)
            #expect(inserted.isFault)
            #expect((inserted as? Note)?.text1 == "new")
            // A merged deletion of a held object: a pending delete, as in Core Data — still
            // registered, in deletedObjects, left out of fetches and counts.
            #expect(receiver.registeredObject(for: doomedID) === doomedCopy)
            #expect(doomedCopy.isDeleted)
            #expect(receiver.deletedObjects.contains(doomedCopy))
            #expect(try receiver.fetch(Note.fetchRequest()).count == 2)
            #expect(try receiver.count(for: Note.fetchRequest()) == 2)
            try receiver.save()                          // no conflict: the row is already gone
            #expect(receiver.registeredObject(for: doomedID) == nil)
            #expect(receiver.deletedObjects.isEmpty)
        }
        _ = stack
    }

    /// A held fault whose deletion is merged is not loaded again at the next save (its row is
    /// gone), even where inaccessible faults would stop the process.
    @Test(arguments: StoreKind.allCases)
    func aMergedDeletionOfAHeldFaultSavesWithoutLoadingIt(kind: StoreKind) throws {
        let (stack, saver, receiver, id, _) = try twoContexts(kind)
        receiver.shouldDeleteInaccessibleFaults = false
        let fault = receiver.performAndWait { () -> ManagedObject in
            receiver.refresh(receiver.object(with: id), mergeChanges: false)
            return receiver.object(with: id)
        }
        let notifications = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: saver, queue: nil) { notifications.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try saver.performAndWait { () throws in
            saver.delete(saver.object(with: id))
            try saver.save()
        }
        let deletion = try #require(notifications.values.first)
        try receiver.performAndWait { () throws in
            #expect(fault.isFault)
            receiver.mergeChanges(fromContextDidSave: deletion)
            #expect(fault.isDeleted)
            #expect(try receiver.count(for: Note.fetchRequest()) == 0)
            try receiver.save()
            #expect(receiver.registeredObject(for: id) == nil)
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func theObjectIDFormAndRemoteMergesWork(kind: StoreKind) throws {
        let (stack, saver, receiver, id, held) = try twoContexts(kind)
        let idNotifications = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification, object: saver, queue: nil) {
            idNotifications.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try save("v2", on: saver, id: id)
        let notification = try #require(idNotifications.values.first)
        #expect((notification.userInfo?[NSUpdatedObjectIDsKey] as? Set<ManagedObjectID>) == [id])
        receiver.performAndWait {
            receiver.mergeChanges(fromContextDidSave: notification)
            #expect(held?.text1 == "v2")
        }
        try save("v3", on: saver, id: id)
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [id.uriRepresentation()]], into: [receiver])
        receiver.performAndWait { #expect(held?.text1 == "v3") }
        _ = stack
    }

    /// Another process (here: another coordinator on the same file, which shares nothing in
    /// memory) saves; its URIs, merged as a remote save, bring the new values to held objects
    /// and to faults whose rows this coordinator cached before.
    @Test func remoteSavesBringTheStoresValuesNotCachedOnes() throws {
        let directory = TemporaryDirectory()
        let here = try TestStack(.sqlite, directory: directory)
        let elsewhere = try TestStack(.sqlite, directory: directory)
        let context = here.container.newBackgroundContext()
        let (heldID, faultID) = try context.performAndWait { () throws in
            let held = Note(context: context)
            held.text1 = "v1"
            let fault = Note(context: context)
            fault.text1 = "v1"
            try context.save()
            return (held.objectID, fault.objectID)
        }
        let receiver = here.container.newBackgroundContext()
        let held = try receiver.performAndWait { () throws in
            let held = try receiver.existingObject(with: heldID) as? Note
            // Read once (the coordinator caches the row), then turned back into a fault.
            let fault = try receiver.existingObject(with: faultID)
            receiver.refresh(fault, mergeChanges: false)
            return held
        }
        let remote = elsewhere.container.newBackgroundContext()
        let uris = try remote.performAndWait { () throws -> [URL] in
            let objects = try [heldID, faultID].map { id in
                try remote.existingObject(with: #require(elsewhere.container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())))
            }
            for object in objects { (object as? Note)?.text1 = "v2" }
            try remote.save()
            return objects.map { $0.objectID.uriRepresentation() }
        }
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: uris], into: [receiver])
        receiver.performAndWait {
            #expect(held?.text1 == "v2")
            #expect((receiver.object(with: faultID) as? Note)?.text1 == "v2")
        }
        // A context that had never seen them reads the store's values too.
        let late = here.container.newBackgroundContext()
        late.performAndWait {
            #expect((late.object(with: faultID) as? Note)?.text1 == "v2")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStaleNotificationNeverMovesAnObjectBack(kind: StoreKind) throws {
        let (stack, saver, receiver, id, held) = try twoContexts(kind)
        let notifications = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: saver, queue: nil) {
            notifications.append($0)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        for text in ["v2", "v3"] {
            try saver.performAndWait { () throws in
                (saver.object(with: id) as? Note)?.text1 = text
                try saver.save()
            }
        }
        let (second, third) = (notifications.values[0], notifications.values[1])
        receiver.performAndWait {
            receiver.mergeChanges(fromContextDidSave: third)
            receiver.mergeChanges(fromContextDidSave: second)
            let note = held
            #expect(note?.text1 == "v3")
            #expect(note?.isUpdated == false)
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func automaticMergingHappensLaterOnTheReceiversQueueInSaveOrder(kind: StoreKind) async throws {
        let stack = try TestStack(kind)
        let viewContext = stack.container.viewContext
        viewContext.automaticallyMergesChangesFromParent = true
        let saver = stack.container.newBackgroundContext()
        let id = try await saver.perform { () throws in
            let note = Note(context: saver)
            note.text1 = "v0"
            try saver.save()
            return note.objectID
        }
        // Registers (and holds) the note; FIFO also drains the merge of the insert, queued
        // during that save, so only the three updates below reach the observer.
        let held = try viewContext.performAndWait { try viewContext.existingObject(with: id) }
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let seen = Recorder<String>()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: viewContext, queue: nil) { _ in
            let text = (viewContext.registeredObject(for: id) as? Note)?.text1 ?? "?"
            seen.append("\(text)@\(DispatchQueue.getSpecific(key: key) ?? "elsewhere")")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try await saver.perform { () throws in
            for i in 1...3 {
                (saver.object(with: id) as? Note)?.text1 = "v\(i)"
                try saver.save()
            }
        }
        // Let the main queue run the merges, then check them.
        _ = await eventually { seen.values.count >= 3 }
        #expect(seen.values == ["v1@main", "v2@main", "v3@main"])
        _ = held
    }

    /// A child context that merges automatically hears from its parent: the parent's saves reach
    /// it, a save of another context on the coordinator does not (its parent has not seen it).
    @Test(arguments: StoreKind.allCases)
    func aChildMergesItsParentsSavesAutomatically(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let parent = stack.container.newBackgroundContext()
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true
        let other = stack.container.newBackgroundContext()
        let id = try parent.performAndWait { () throws -> ManagedObjectID in
            let note = Note(context: parent)
            note.text1 = "v0"
            try parent.save()
            return note.objectID
        }
        let held = try child.performAndWait { try child.existingObject(with: id) as! Note }
        try other.performAndWait { () throws in
            (try other.existingObject(with: id) as! Note).text1 = "elsewhere"
            try other.save()
        }
        try parent.performAndWait { () throws in
            parent.refreshAllObjects()
            let note = try parent.existingObject(with: id) as! Note
            #expect(note.text1 == "elsewhere")
        }
        child.performAndWait { #expect(held.text1 == "v0") }
        try parent.performAndWait { () throws in
            (try parent.existingObject(with: id) as! Note).text1 = "parent's"
            try parent.save()
        }
        // The merge is queued on the child's queue during the parent's save: it runs first.
        child.performAndWait { #expect(held.text1 == "parent's") }
    }

    @Test(arguments: StoreKind.allCases)
    func withoutAutomaticMergingObjectsKeepTheirValuesUntilRefreshed(kind: StoreKind) throws {
        let (stack, saver, receiver, id, held) = try twoContexts(kind)
        try save("v2", on: saver, id: id)
        receiver.performAndWait {
            let note = held
            #expect(note?.text1 == "v1")
            receiver.refreshAllObjects()
            #expect(note?.text1 == "v2")
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithAndWithoutMergingChanges(kind: StoreKind) throws {
        let (stack, saver, receiver, id, held) = try twoContexts(kind)
        try save("v2", on: saver, id: id)
        receiver.performAndWait {
            let note = held
            note?.text2 = "mine"
            receiver.refresh(note!, mergeChanges: true)
            #expect(note?.text1 == "v2" && note?.text2 == "mine")
            receiver.refresh(note!, mergeChanges: false)
            #expect(note?.isFault == true)
            #expect(note?.text2 == nil)
            #expect(!receiver.hasChanges)
        }
        _ = stack
    }

    @Test(arguments: StoreKind.allCases)
    func detectConflictsReportsAChangedRow(kind: StoreKind) throws {
        let (stack, saver, receiver, id, _) = try twoContexts(kind)
        try receiver.performAndWait { () throws in try receiver.detectConflicts(for: receiver.object(with: id)) }
        try save("v2", on: saver, id: id)
        receiver.performAndWait {
            let error = #expect(throws: CoreDataError.self) { try receiver.detectConflicts(for: receiver.object(with: id)) }
            #expect(error?.conflicts.first?.newVersionNumber == 2)
        }
        _ = stack
    }

    @Test func saveEventsArriveAsAnAsyncSequence() async throws {
        let stack = try TestStack(.sqlite)
        let saver = stack.container.newBackgroundContext()
        saver.name = "importer"
        let events = saver.didSaveEvents
        let all = stack.container.persistentStoreCoordinator.didSaveEvents
        try await saver.perform { () throws in
            for _ in 0..<3 { _ = Note(context: saver) }
            try saver.save()
        }
        var iterator = events.makeAsyncIterator()
        let event = try #require(await iterator.next())
        #expect(event.insertedObjectIDs.count == 3)
        #expect(event.contextName == "importer")
        var allIterator = all.makeAsyncIterator()
        let coordinatorEvent = try #require(await allIterator.next())
        #expect(coordinatorEvent.insertedObjectIDs == event.insertedObjectIDs)
    }
}

@Suite(.dedicatedThread) struct StalenessTests {
    @Test func aZeroStalenessIntervalReadsFaultsFromTheStoreNotTheRowCache() throws {
        let directory = TemporaryDirectory()
        let first = try TestStack(.sqlite, directory: directory)
        let second = try TestStack(.sqlite, directory: directory)
        let writer = first.container.newBackgroundContext()
        let id = try writer.performAndWait { () throws in
            let note = Note(context: writer)
            note.text1 = "v1"
            try writer.save()
            return note.objectID
        }
        let warm = first.container.newBackgroundContext()
        _ = try warm.performAndWait { try warm.existingObject(with: id) }     // caches the row
        // Another coordinator changes the row behind the first one's cache.
        let other = second.container.newBackgroundContext()
        try other.performAndWait { () throws in
            (try other.existingObject(with: id) as? Note)?.text1 = "v2"
            try other.save()
        }
        let cached = first.container.newBackgroundContext()
        cached.performAndWait { #expect((cached.object(with: id) as? Note)?.text1 == "v1") }
        let fresh = first.container.newBackgroundContext()
        fresh.stalenessInterval = 0
        fresh.performAndWait { #expect((fresh.object(with: id) as? Note)?.text1 == "v2") }
    }
}
