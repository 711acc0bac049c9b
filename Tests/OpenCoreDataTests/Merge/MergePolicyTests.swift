import OpenCoreData
import Testing
import TestSupport

/// One note with three texts "A" (version 1); context V changes text2 and text3 to "V";
/// context B changes text1 and text3 to "B" and saves (version 2); then V saves with `policy`.
private func conflictingSave(_ kind: StoreKind, policy: MergePolicy) throws -> (texts: [String?], error: CoreDataError?) {
    let stack = try TestStack(kind)
    let setup = stack.container.newBackgroundContext()
    let id = try setup.performAndWait { () throws in
        let note = Note(context: setup)
        (note.text1, note.text2, note.text3) = ("A", "A", "A")
        try setup.save()
        return note.objectID
    }
    let v = stack.container.newBackgroundContext()
    v.mergePolicy = policy
    let b = stack.container.newBackgroundContext()
    let vNote = try v.performAndWait { try v.existingObject(with: id) } as? Note
    let bNote = try b.performAndWait { try b.existingObject(with: id) } as? Note
    v.performAndWait { vNote?.text2 = "V"; vNote?.text3 = "V" }
    try b.performAndWait { () throws in
        bNote?.text1 = "B"
        bNote?.text3 = "B"
        try b.save()
    }
    var failure: CoreDataError?
    v.performAndWait {
        do { try v.save() } catch { failure = error as? CoreDataError }
    }
    let check = stack.container.newBackgroundContext()
    let texts = try check.performAndWait { () throws -> [String?] in
        let note = try check.existingObject(with: id) as? Note
        return [note?.text1, note?.text2, note?.text3]
    }
    return (texts, failure)
}

@Suite(.dedicatedThread) struct MergePolicyTests {
    @Test(arguments: StoreKind.allCases)
    func theFivePoliciesOnOneConflictingNote(kind: StoreKind) throws {
        // The four resolving policies: the save succeeds (the rollback policy leaves the same
        // texts as a failed save, so success is checked, not only the texts).
        let resolving: [(MergePolicy, [String?])] = [(.mergeByPropertyStoreTrump, ["B", "V", "B"]), (.mergeByPropertyObjectTrump, ["B", "V", "V"]),
                                                     (.overwrite, ["A", "V", "V"]), (.rollback, ["B", "A", "B"])]
        for (policy, texts) in resolving {
            let result = try conflictingSave(kind, policy: policy)
            #expect(result.error == nil, "the save under \(policy) failed: \(result.error.map { "\($0)" } ?? "")")
            #expect(result.texts == texts, "\(policy)")
        }
        let error = try conflictingSave(kind, policy: .error)
        #expect(error.texts == ["B", "A", "B"])
        #expect(error.error?.code.rawValue == 133020)
        #expect(error.error?.conflicts.first?.oldVersionNumber == 1)
        #expect(error.error?.conflicts.first?.newVersionNumber == 2)
    }

    /// The row is deleted underneath an object that `changed` edits, then `changed` saves.
    private func deletedUnderneath(_ kind: StoreKind, policy: MergePolicy) throws -> (rows: Int, text: String?, deletedLocally: Bool) {
        let stack = try TestStack(kind)
        let a = stack.container.newBackgroundContext()
        let id = try a.performAndWait { () throws in
            let note = Note(context: a)
            note.text1 = "original"
            try a.save()
            return note.objectID
        }
        let changed = stack.container.newBackgroundContext()
        changed.mergePolicy = policy
        let copy = try changed.performAndWait { try changed.existingObject(with: id) } as? Note
        try a.performAndWait { () throws in
            a.delete(a.object(with: id))
            try a.save()
        }
        try changed.performAndWait { () throws in
            copy?.text1 = "mine"
            try changed.save()
        }
        let check = stack.container.newBackgroundContext()
        return try check.performAndWait { () throws in
            let notes = try check.fetch(Note.fetchRequest())
            return (notes.count, notes.first?.text1, copy?.isDeleted ?? false)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func policiesOnARowDeletedUnderneath(kind: StoreKind) throws {
        let storeTrump = try deletedUnderneath(kind, policy: .mergeByPropertyStoreTrump)
        #expect(storeTrump.rows == 0 && storeTrump.deletedLocally)
        let rollback = try deletedUnderneath(kind, policy: .rollback)
        #expect(rollback.rows == 0 && rollback.deletedLocally)
        let objectTrump = try deletedUnderneath(kind, policy: .mergeByPropertyObjectTrump)
        #expect(objectTrump.rows == 1 && objectTrump.text == "mine")
        let overwrite = try deletedUnderneath(kind, policy: .overwrite)
        #expect(overwrite.rows == 1 && overwrite.text == "mine")
    }

    @Test(arguments: StoreKind.allCases)
    func aCustomPolicySeesTheConflictsAndCanDeferToSuper(kind: StoreKind) throws {
        final class Recording: MergePolicy, @unchecked Sendable {
            let seen = Recorder<Int>()
            override func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
                for conflict in list { seen.append(conflict.newVersionNumber) }
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let policy = Recording(merge: .mergeByPropertyObjectTrump)
        let result = try conflictingSave(kind, policy: policy)
        #expect(policy.seen.values == [2])
        #expect(result.texts == ["B", "V", "V"])
    }

    /// The merge policy decides while the conflicting row is held by the save's transaction, as
    /// Core Data decides with the store locked: another writer cannot change it between the
    /// decision and the write. Resolving between transactions instead, a writer that changed the
    /// row again during every decision (here the policy itself, through another coordinator)
    /// made the save conflict on every retry until it threw 133020 with a policy set — which two
    /// writers that keep saving one row do by falling into step (`Reliability/run --postgres`).
    @Test(arguments: StoreKind.allCases.filter { $0 != .inMemory })
    func theMergePolicyDecidesWhileTheConflictingRowIsHeld(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        // Another coordinator on the same store, which gives up waiting for a held row at once.
        let other = PersistentContainer(name: "Other", managedObjectModel: stack.container.managedObjectModel)
        let description: PersistentStoreDescription
        if kind == .postgreSQL {
            var components = try #require(URLComponents(url: try stack.directory.postgreSQLSchema(), resolvingAgainstBaseURL: false))
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "lock_timeout", value: "1")]
            description = PersistentStoreDescription(url: try #require(components.url), type: .postgreSQL)
        } else {
            description = PersistentStoreDescription(url: stack.storeURL)
            description.setOption(0.2, forKey: NSPersistentStoreTimeoutOption)
        }
        other.persistentStoreDescriptions = [description]
        try other.loadPersistentStores()

        final class Interfering: MergePolicy, @unchecked Sendable {
            let decisions = Recorder<Bool>()
            var interfere: () -> Bool = { false }
            override func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
                decisions.append(interfere())     // whether the other writer got the row meanwhile
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let setup = stack.container.newBackgroundContext()
        let id = try setup.performAndWait { () throws in
            let note = Note(context: setup)
            (note.text1, note.text2, note.text3) = ("A", "A", "A")
            try setup.save()
            return note.objectID
        }
        let writer = other.newBackgroundContext()
        var changes = 0
        /// The other writer changes text3 and saves; whether it could.
        func otherWriterSaves() -> Bool {
            writer.performAndWait {
                writer.refreshAllObjects()
                guard let note = try? writer.existingObject(with: id) as? Note else { return false }
                changes += 1
                note.text3 = "other \(changes)"
                do {
                    try writer.save()
                    return true
                } catch {
                    writer.rollback()
                    return false
                }
            }
        }
        let policy = Interfering(merge: .mergeByPropertyObjectTrump)
        policy.interfere = otherWriterSaves
        let saving = stack.container.newBackgroundContext()
        saving.mergePolicy = policy
        let note = try saving.performAndWait { try saving.existingObject(with: id) } as? Note
        saving.performAndWait { note?.text2 = "mine" }
        #expect(otherWriterSaves())     // the conflict
        let failure = saving.performAndWait { () -> CoreDataError? in
            do {
                try saving.save()
                return nil
            } catch {
                return error as? CoreDataError
            }
        }
        #expect(failure == nil, "\(failure?.message ?? "")")
        #expect(policy.decisions.values == [false], "the policy is asked once, and the row cannot change while it decides")
        let check = stack.container.newBackgroundContext()
        let texts = try check.performAndWait { () throws -> [String?] in
            let note = try check.existingObject(with: id) as? Note
            return [note?.text1, note?.text2, note?.text3]
        }
        #expect(texts == ["A", "mine", "other 1"])
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentIncrementsWithRetriesNeverLoseOne(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let setup = stack.container.newBackgroundContext()
        let id = try setup.performAndWait { () throws in
            let counter = Note(context: setup)
            try setup.save()
            return counter.objectID
        }
        let perWorker = 500
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let context = stack.container.newBackgroundContext()
            context.performAndWait {
                for _ in 0..<perWorker {
                    // Bounded: a save that keeps failing fails the test instead of hanging it.
                    for attempt in 0...10_000 {
                        guard attempt < 10_000 else {
                            Issue.record("an increment was still refused after 10,000 attempts")
                            return
                        }
                        guard let counter = try? context.existingObject(with: id) as? Note else { return }
                        counter.id += 1
                        do {
                            try context.save()
                            break
                        } catch {
                            context.refresh(counter, mergeChanges: false)
                        }
                    }
                }
            }
        }
        let check = stack.container.newBackgroundContext()
        let total = try check.performAndWait { try (check.existingObject(with: id) as? Note)?.id }
        #expect(total == 2000)
    }
}
