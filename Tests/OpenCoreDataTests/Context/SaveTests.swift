import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct SaveTests {
    @Test(arguments: StoreKind.allCases)
    func aConcurrentEditIsAnOptimisticLockingConflict(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let first = stack.container.newBackgroundContext()
        let second = stack.container.newBackgroundContext()
        let id = try first.performAndWait { () throws in
            let note = Note(context: first)
            note.text1 = "A"
            try first.save()
            return note.objectID
        }
        let secondCopy = try second.performAndWait { try second.existingObject(with: id) as? Note }
        try first.performAndWait { () throws in
            (first.object(with: id) as? Note)?.text1 = "first"
            try first.save()
        }
        try second.performAndWait { () throws in
            secondCopy?.text2 = "second"
            let error = #expect(throws: CoreDataError.self) { try second.save() }
            #expect(error?.code == .managedObjectMerge)
            #expect(error?.code.rawValue == 133020)
            #expect(error?.message.hasPrefix("Could not merge changes.") == true)
            // As an NSError, as Core Data's conflict handling reads it.
            let nsError = try #require(error.map { $0 as NSError })
            #expect(nsError.domain == NSCocoaErrorDomain && nsError.code == NSManagedObjectMergeError)
            #expect((nsError.userInfo["conflictList"] as? [NSMergeConflict])?.first?.sourceObject === secondCopy)
            #expect((nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?.count == 1)
            let conflict = try #require(error?.conflicts.first)
            #expect(conflict.sourceObject === secondCopy)
            #expect(conflict.oldVersionNumber == 1)
            #expect(conflict.newVersionNumber == 2)
            #expect(conflict.objectSnapshot?["text1"] as? String == "A")
            #expect(conflict.persistedSnapshot?["text1"] as? String == "first")
            // Nothing was written and the context keeps its change.
            #expect(secondCopy?.text2 == "second")
            #expect(second.hasChanges)
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            let note = try #require(try check.existingObject(with: id) as? Note)
            #expect(note.text1 == "first")
            #expect(note.text2 == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changingDifferentObjectsNeverConflicts(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let setup = stack.container.newBackgroundContext()
        let ids = try setup.performAndWait { () throws in
            let notes = (0..<2).map { _ in Note(context: setup) }
            try setup.save()
            return notes.map(\.objectID)
        }
        let a = stack.container.newBackgroundContext()
        let b = stack.container.newBackgroundContext()
        let noteA = try a.performAndWait { try a.existingObject(with: ids[0]) as? Note }
        let noteB = try b.performAndWait { try b.existingObject(with: ids[1]) as? Note }
        try a.performAndWait { noteA?.text1 = "a"; try a.save() }
        try b.performAndWait { noteB?.text1 = "b"; try b.save() }
    }

    @Test(arguments: StoreKind.allCases)
    func updatingARowDeletedUnderneathIsAConflictWithVersionZero(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let a = stack.container.newBackgroundContext()
        let b = stack.container.newBackgroundContext()
        let id = try a.performAndWait { () throws in
            let note = Note(context: a)
            try a.save()
            return note.objectID
        }
        let copy = try b.performAndWait { try b.existingObject(with: id) } as? Note
        try a.performAndWait { () throws in
            a.delete(a.object(with: id))
            try a.save()
        }
        try b.performAndWait { () throws in
            copy?.text1 = "too late"
            let error = #expect(throws: CoreDataError.self) { try b.save() }
            #expect(error?.conflicts.first?.newVersionNumber == 0)
            #expect(error?.conflicts.first?.persistedSnapshot == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func missingMandatoryValuesFailWith1570AndSeveralWith1560(kind: StoreKind) throws {
        let entity = EntityDescription(name: "Account", properties: [
            AttributeDescription(name: "owner", type: .string, isOptional: false),
            AttributeDescription(name: "number", type: .integer64, isOptional: false),
        ])
        let model = ManagedObjectModel(entities: [entity])
        let stack = try TestStack(kind, model: model)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let account = ManagedObject(entity: entity, insertInto: context)
            account.setValue(7, forKey: "number")
            let single = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(single?.code == .validationMissingMandatoryProperty)
            #expect(single?.code.rawValue == 1570)
            #expect(single?.key == "owner")
            account.setValue(nil, forKey: "number")
            let multiple = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(multiple?.code.rawValue == 1560)
            #expect(Set(multiple?.underlyingErrors.compactMap(\.key) ?? []) == ["owner", "number"])
            account.setValue("Ada", forKey: "owner")
            account.setValue(1, forKey: "number")
            try context.save()
        }
    }

    @Test func savingWithoutAStoreIsAClearError() throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(Note.self))
        context.performAndWait {
            _ = Note(context: context)
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.message.contains("loadPersistentStores") == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aSavePostsDidSaveOnTheSavingContextsQueue(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let counts = Recorder<[Int]>()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: context, queue: nil) { note in
            let info = note.userInfo ?? [:]
            counts.append([NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey].map { (info[$0] as? Set<ManagedObject>)?.count ?? -1 })
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait { () throws in
            let notes = (0..<3).map { _ in Note(context: context) }
            try context.save()
            notes[0].text1 = "x"
            context.delete(notes[1])
            try context.save()
            try context.save()          // nothing to save: no notification
        }
        #expect(counts.values == [[3, 0, 0], [0, 1, 1]])
    }

    /// The did-save notification names every saved object, whatever the objects-did-change
    /// notifications before it named: its sets are made again when the save's objects are not the
    /// last notification's (the save reuses that notification's sets only when they are the same).
    @Test(arguments: StoreKind.allCases)
    func didSaveNamesTheSavedObjectsNotTheLastEventsOnes(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 0...3) { note, id in note.text1 = "saved \(id)" }
        let changedSets = Recorder<[Set<Int32>]>()
        let savedSets = Recorder<[Set<Int32>]>()
        @Sendable func ids(_ info: [AnyHashable: Any]?) -> [Set<Int32>] {
            [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey].map { key in
                Set(((info?[key] as? Set<ManagedObject>) ?? []).compactMap { ($0 as? Note)?.id })
            }
        }
        let didChange = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { changedSets.append(ids($0.userInfo)) }
        let didSave = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: context, queue: nil) { savedSets.append(ids($0.userInfo)) }
        defer { [didChange, didSave].forEach(NotificationCenter.default.removeObserver) }
        try context.performAndWait { () throws in
            let notes = try context.fetch(FetchRequest<Note>(entityName: "Note")).sorted { $0.id < $1.id }
            notes[0].text1 = "changed in the first event"
            context.processPendingChanges()
            notes[1].text1 = "changed in the save's event"
            try context.save()
            // The same objects as the save's own event: the sets are right either way.
            notes[2].text1 = "changed and saved"
            try context.save()
            // The same lists as the last notification, then a different save.
            notes[3].text1 = "announced"
            context.processPendingChanges()
            context.delete(notes[3])
            try context.save()
        }
        #expect(changedSets.values == [
            [[], [0], []], [[], [1], []],
            [[], [2], []],
            [[], [3], []], [[], [], [3]],
        ])
        #expect(savedSets.values == [[[], [0, 1], []], [[], [2], []], [[], [], [3]]])
    }

    /// Objects whose changes are dropped (a refresh without merging) leave the context's changes,
    /// and come back once when changed again: many of them at once (the list of changes is
    /// compacted on the way), some changed twice, one deleted after its refresh.
    @Test(arguments: StoreKind.allCases)
    func refreshedObjectsLeaveTheChangesAndComeBackOnceWhenChangedAgain(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 0...199) { note, id in note.text1 = "saved \(id)" }
        let again = Set(100..<110).union(160..<165)
        try context.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let notes = try context.fetch(request)
            for note in notes { note.text1 = "changed \(note.id)" }
            #expect(context.updatedObjects.count == 200)
            for note in notes[50...] { context.refresh(note, mergeChanges: false) }
            #expect(context.updatedObjects.count == 50)
            for note in notes where again.contains(Int(note.id)) {
                note.text1 = "changed first"
                note.text1 = "changed again"
            }
            context.delete(notes[150])
            #expect(context.updatedObjects.count == 65)
            #expect(context.deletedObjects == [notes[150]])
            try context.save()
            #expect(!context.hasChanges)
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            let texts = Dictionary(uniqueKeysWithValues: try check.fetch(Note.fetchRequest()).map { (Int($0.id), $0.text1 ?? "") })
            #expect(texts.count == 199)
            #expect(texts[150] == nil)
            for id in 0..<200 where id != 150 {
                #expect(texts[id] == (id < 50 ? "changed \(id)" : again.contains(id) ? "changed again" : "saved \(id)"))
            }
        }
    }
}
