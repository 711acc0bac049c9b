import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct PersistentHistoryTests {
    private func stack(_ kind: StoreKind, directory: TemporaryDirectory = TemporaryDirectory()) throws -> TestStack {
        try TestStack(kind, model: ManagedObjectModel(Entry.self, Note.self), directory: directory, options: [NSPersistentHistoryTrackingKey: true])
    }

    private func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil) throws -> [PersistentHistoryTransaction] {
        try context.performAndWait { () throws in try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions }
    }

    @Test(arguments: StoreKind.allCases)
    func savesAreRecordedWithAuthorChangesAndTombstones(kind: StoreKind) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        context.name = "importer"
        context.transactionAuthor = "sync"
        let id = try context.performAndWait { () throws in
            let entry = Entry(context: context)
            entry.code = "E1"
            try context.save()
            entry.value = 7
            try context.save()
            context.delete(entry)
            try context.save()
            return entry.objectID
        }
        let transactions = try history(context)
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "sync" && $0.contextName == "importer" && $0.processID != nil })
        #expect(transactions.map(\.token.transactionNumber) == transactions.map(\.token.transactionNumber).sorted())
        let changes = transactions.compactMap { $0.changes?.first }
        #expect(changes.map(\.changeType) == [.insert, .update, .delete])
        #expect(changes.allSatisfy { $0.changedObjectID == id })
        #expect(changes[1].updatedPropertyNames == ["value"])
        #expect(changes[1].updatedProperties?.map(\.name) == ["value"])
        #expect(changes[2].tombstone?["code"] as? String == "E1")
        #expect(context.persistentStoreCoordinator?.currentPersistentHistoryToken() == transactions.last?.token)
    }

    /// An object deleted in two contexts — one merged the other's deletion, one did not — is
    /// deleted once: the later saves meet no conflict and record no second deletion.
    @Test(arguments: StoreKind.allCases)
    func aRowDeletedTwiceIsRecordedOnce(kind: StoreKind) throws {
        let stack = try stack(kind)
        let first = stack.container.newBackgroundContext(), merging = stack.container.newBackgroundContext(), unaware = stack.container.newBackgroundContext()
        let id = try first.performAndWait { () throws in
            let entry = Entry(context: first)
            entry.code = "twice"
            try first.save()
            return entry.objectID
        }
        let heldByMerging = try merging.performAndWait { try merging.existingObject(with: id) }
        let heldByUnaware = try unaware.performAndWait { try unaware.existingObject(with: id) }
        let saves = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: first, queue: nil) { saves.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try first.performAndWait { () throws in
            first.delete(first.object(with: id))
            try first.save()
        }
        let deletion = try #require(saves.values.first)
        try merging.performAndWait { () throws in
            merging.mergeChanges(fromContextDidSave: deletion)
            #expect(heldByMerging.isDeleted && merging.hasChanges)
            try merging.save()
            #expect(merging.registeredObject(for: id) == nil)
        }
        try unaware.performAndWait { () throws in
            unaware.delete(heldByUnaware)
            try unaware.save()
        }
        let deletions = try history(first).flatMap { $0.changes ?? [] }.filter { $0.changeType == .delete && $0.changedObjectID == id }
        #expect(deletions.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func batchRequestsAreRecordedToo(kind: StoreKind) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try context.execute(BatchInsertRequest(entityName: "Entry", objects: [["code": "a"], ["code": "b"]]))
            let update = BatchUpdateRequest(entityName: "Entry")
            update.propertiesToUpdate = ["value": 1]
            _ = try context.execute(update)
            _ = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Entry")))
        }
        let transactions = try history(context)
        #expect(transactions.map { $0.changes?.map(\.changeType) ?? [] } == [[.insert, .insert], [.update, .update], [.delete, .delete]])
        #expect(transactions[1].changes?.first?.updatedPropertyNames == ["value"])
        #expect(Set(transactions[2].changes?.compactMap { $0.tombstone?["code"] as? String } ?? []) == ["a", "b"])
    }

    @Test(arguments: StoreKind.allCases)
    func tokensRoundTripAndExpire(kind: StoreKind) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        for code in ["one", "two", "three"] {
            try context.performAndWait { () throws in
                Entry(context: context).code = code
                try context.save()
            }
        }
        let all = try history(context)
        #expect(all.count == 3)
        // A token survives JSON (apps keep the last one they processed).
        let saved = try JSONEncoder().encode(all[0].token)
        let token = try JSONDecoder().decode(PersistentHistoryToken.self, from: saved)
        #expect(try history(context, after: token).count == 2)
        // …and NSKeyedArchiver, as Apple's Earthquakes sample keeps it.
        let archived = try NSKeyedArchiver.archivedData(withRootObject: all[1].token, requiringSecureCoding: true)
        let unarchived = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archived))
        #expect(unarchived == all[1].token && unarchived != all[0].token)
        #expect(try history(context, after: unarchived).count == 1)
        #expect(throws: (any Error).self) { try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: Data("not an archive".utf8)) }
        let byDate = try context.performAndWait { () throws in
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: all[1].timestamp)).transactions
        }
        #expect(byDate.map(\.token) == [all[2].token])
        // Deleting through the second transaction makes the first token expire.
        try context.performAndWait { () throws in
            _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[1].token))
        }
        #expect(try history(context, after: all[1].token).map(\.token) == [all[2].token])
        let error = try #require(throws: CoreDataError.self) { try history(context, after: token) }
        #expect(error.code == .persistentHistoryTokenExpired)
    }

    @Test(arguments: StoreKind.allCases)
    func mergingHistoryBringsAContextUpToDateInOnePass(kind: StoreKind) throws {
        let stack = try stack(kind)
        let viewer = stack.container.newBackgroundContext()
        let writer = stack.container.newBackgroundContext()
        let (kept, gone) = try writer.performAndWait { () throws in
            let kept = Entry(context: writer), gone = Entry(context: writer)
            kept.code = "kept"
            gone.code = "gone"
            try writer.save()
            return (kept.objectID, gone.objectID)
        }
        let start = viewer.persistentStoreCoordinator?.currentPersistentHistoryToken()
        let (heldKept, heldGone) = try viewer.performAndWait { () throws in
            (try #require(try viewer.existingObject(with: kept) as? Entry), try #require(try viewer.existingObject(with: gone) as? Entry))
        }
        try writer.performAndWait { () throws in
            for round in 1...5 {
                (writer.object(with: kept) as? Entry)?.value = Int64(round)
                try writer.save()
            }
            writer.delete(writer.object(with: gone))
            try writer.save()
        }
        let transactions = try history(viewer, after: start)
        #expect(transactions.count == 6)
        viewer.performAndWait {
            #expect(heldKept.value == 0)
            viewer.mergeChanges(fromHistory: transactions)
            #expect(heldKept.value == 5)
            #expect(heldGone.isDeleted)
        }
        // One transaction's notification works with the classic merge too.
        let last = try #require(transactions.last)
        let note = last.objectIDNotification()
        #expect((note.userInfo?[NSDeletedObjectIDsKey] as? Set<ManagedObjectID>) == [gone])
    }

    @Test func aStoreWithoutTrackingHasNoHistory() throws {
        let stack = try TestStack(.sqlite, model: ManagedObjectModel(Entry.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            Entry(context: context).code = "x"
            try context.save()
            #expect(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.isEmpty)
        }
        #expect(stack.container.persistentStoreCoordinator.currentPersistentHistoryToken() == nil)
        let db = try RawSQLite(stack.storeURL)
        #expect(try db.rows("SELECT name FROM sqlite_master WHERE name = 'ATRANSACTION'").isEmpty)
    }

    /// A coordinator that opened the store before another one (as another process would) started
    /// recording history in it writes no more: its saves would be missing from that history.
    /// Core Data makes such a store read-only when it is opened; here the first write after the
    /// change is refused, having written nothing, and the recording side's history stays whole.
    @Test(arguments: StoreKind.allCases.filter { $0 != .inMemory })
    func aCoordinatorWithoutTrackingStopsWritingOnceAnotherStartsRecording(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(Entry.self, Note.self)
        let plain = try TestStack(kind, model: model, directory: directory)
        let before = plain.container.newBackgroundContext()
        try before.performAndWait { () throws in
            Entry(context: before).code = "before"
            try before.save()
        }
        let recording = try stack(kind, directory: directory)
        let recorder = recording.container.newBackgroundContext()
        try recorder.performAndWait { () throws in
            Entry(context: recorder).code = "recorded"
            try recorder.save()
        }

        let error = try #require(throws: CoreDataError.self) {
            try before.performAndWait { () throws in
                Entry(context: before).code = "unrecorded"
                try before.save()
            }
        }
        #expect(error.code == .persistentStoreSave)
        #expect(error.message.contains("NSPersistentHistoryTrackingKey"))
        let batchError = try #require(throws: CoreDataError.self) {
            try before.performAndWait { () throws in
                _ = try before.execute(BatchInsertRequest(entityName: "Entry", objects: [["code": "batch"]]))
            }
        }
        #expect(batchError.code == .persistentStoreSave)

        try recorder.performAndWait { () throws in
            let request = FetchRequest<Entry>(entityName: "Entry")
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            #expect(try recorder.fetch(request).map(\.code) == ["before", "recorded"], "nothing of the refused writes reached the store")
        }
        let recorded = try history(recorder).flatMap { $0.changes ?? [] }
        #expect(recorded.count == 1)
    }

    /// Many inserts of one entity are recorded as few are (the SQLite store writes a run of them
    /// with one statement): a change per object, in key order, each naming its object, beside the
    /// updates and deletions of the same save; every change key below the store's counter.
    @Test(arguments: StoreKind.allCases, [3, 30])
    func manyInsertsAreRecordedOneChangeEach(kind: StoreKind, count: Int) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        let (batchIDs, savedIDs, updated, deleted) = try context.performAndWait { () throws in
            let request = BatchInsertRequest(entityName: "Entry", objects: (0..<count).map { ["code": "batch \($0)"] })
            request.resultType = .objectIDs
            let batchIDs = try #require(try context.execute(request).result as? [ManagedObjectID])
            let kept = Entry(context: context), gone = Entry(context: context)
            (kept.code, gone.code) = ("kept", "gone")
            try context.save()
            kept.value = 7
            context.delete(gone)
            let notes = (0..<count).map { index in
                let note = Note(context: context)
                note.id = Int32(index)
                return note
            }
            let entries = (0..<count).map { index in
                let entry = Entry(context: context)
                entry.code = "saved \(index)"
                return entry
            }
            try context.save()
            return (batchIDs, (notes + entries).map(\.objectID), kept.objectID, gone.objectID)
        }
        let transactions = try history(context)
        #expect(transactions.count == 3)
        let batch = transactions.first?.changes ?? []
        #expect(batch.map(\.changedObjectID) == batchIDs && batch.allSatisfy { $0.changeType == .insert })
        let save = transactions.last?.changes ?? []
        #expect(Set(save.filter { $0.changeType == .insert }.map(\.changedObjectID)) == Set(savedIDs))
        #expect(save.filter { $0.changeType == .insert }.count == savedIDs.count)
        #expect(save.filter { $0.changeType == .update }.map(\.changedObjectID) == [updated])
        #expect(save.filter { $0.changeType == .delete }.map(\.changedObjectID) == [deleted])
        for change in save where change.changeType == .insert {
            #expect(change.tombstone == nil && change.updatedProperties == nil)
        }
        if kind == .sqlite {
            let db = try RawSQLite(stack.storeURL)
            let counter = try db.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16001").first?.first as? Int64 ?? 0
            let highest = try db.rows("SELECT MAX(Z_PK), COUNT(*), COUNT(DISTINCT Z_PK) FROM ACHANGE").first ?? []
            #expect((highest.first as? Int64 ?? .max) <= counter)
            #expect(highest.dropFirst().map { $0 as? Int64 } == [Int64(3 * count + 4), Int64(3 * count + 4)])
            let columns = try db.rows("SELECT COUNT(*) FROM ACHANGE WHERE ZCHANGETYPE = 0 AND (ZCOLUMNS IS NOT NULL OR Z_OPT != 1 OR Z_ENT != 16001)")
            #expect(columns.first?.first as? Int64 == 0)
        }
    }

    @Test func theSQLiteHistoryIsCoreDatasTables() throws {
        let stack = try stack(.sqlite)
        let context = stack.container.newBackgroundContext()
        context.transactionAuthor = "app"
        try context.performAndWait { () throws in
            Entry(context: context).code = "x"
            try context.save()
        }
        let db = try RawSQLite(stack.storeURL)
        let keys = try db.rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT").map { "\($0[0] as? Int64 ?? 0) \($0[1] as? String ?? "")" }
        #expect(keys == ["16001 CHANGE", "16002 TRANSACTION", "16003 TRANSACTIONSTRING"])
        let row = try db.rows("SELECT t.Z_ENT, s.ZNAME, c.ZCHANGETYPE, c.ZENTITYPK FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS JOIN ACHANGE c ON c.ZTRANSACTIONID = t.Z_PK")
        #expect(row.count == 1)
        #expect(row.first?[0] as? Int64 == 16002)
        #expect(row.first?[1] as? String == "app")
        #expect(row.first?[2] as? Int64 == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchRequestsFilterTransactionsAndChanges(kind: StoreKind) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (author, code) in [("importer", "a"), ("ui", "b"), ("importer", "c")] {
                context.transactionAuthor = author
                Entry(context: context).code = code
                Note(context: context).id = 1
                try context.save()
            }
            let byAuthor = try #require(PersistentHistoryTransaction.fetchRequest)
            byAuthor.predicate = NSPredicate(format: "author == %@", "importer")
            let imported = try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetchRequest: byAuthor)).transactions
            #expect(imported.count == 2 && imported.allSatisfy { $0.author == "importer" })

            // Apple's pattern: the transactions after a token, without the app's own.
            let first = try #require(imported.first?.token)
            let changeRequest = NSPersistentHistoryChangeRequest.fetchHistory(after: first)
            if let historyFetchRequest = NSPersistentHistoryTransaction.fetchRequest {
                historyFetchRequest.predicate = NSPredicate(format: "%K != %@", "author", "ui")
                changeRequest.fetchRequest = historyFetchRequest
            }
            let others = try context.execute(changeRequest).transactions
            #expect(others.map(\.author) == ["importer"] && others.first?.token == imported.last?.token)

            let byEntity = try #require(PersistentHistoryChange.fetchRequest)
            byEntity.predicate = NSPredicate(format: "changedEntity == %@ AND changeType == 0", "Note")
            let notes = try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetchRequest: byEntity)).transactions
            #expect(notes.count == 3)
            #expect(notes.allSatisfy { $0.changes?.map(\.changedObjectID.entity.name) == ["Note"] })
        }
    }

    /// A fetch limit is met by reading history page by page (each page of at least 256
    /// transactions after the last one read), not by loading everything after the bound: the
    /// first `fetchLimit` transactions the predicate keeps, in order, whether the bound is a
    /// token or a date, and for change requests too.
    @Test(arguments: StoreKind.allCases)
    func aFetchLimitTakesTheFirstMatchesAcrossPages(kind: StoreKind) throws {
        let stack = try stack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let start = Date(timeIntervalSinceNow: -60)
            for index in 0..<600 {
                let imported = index % 3 == 0
                context.transactionAuthor = imported ? "importer" : "ui"
                if imported { Note(context: context).id = Int32(index) } else { Entry(context: context).code = "e\(index)" }
                try context.save()
            }
            let all = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
            #expect(all.count == 600)
            let importedNumbers = all.filter { $0.author == "importer" }.map(\.token.transactionNumber)

            let byAuthor = try #require(PersistentHistoryTransaction.fetchRequest)
            byAuthor.predicate = NSPredicate(format: "author == %@", "importer")
            byAuthor.fetchLimit = 150
            let afterToken = PersistentHistoryChangeRequest.fetchHistory(after: all[1].token)
            afterToken.fetchRequest = byAuthor
            let fromToken = try context.execute(afterToken).transactions.map(\.token.transactionNumber)
            #expect(fromToken == Array(importedNumbers.dropFirst().prefix(150)))

            let afterDate = PersistentHistoryChangeRequest.fetchHistory(after: start)
            afterDate.fetchRequest = byAuthor
            #expect(try context.execute(afterDate).transactions.map(\.token.transactionNumber) == Array(importedNumbers.prefix(150)))

            let notes = try #require(PersistentHistoryChange.fetchRequest)
            notes.predicate = NSPredicate(format: "changedEntity == %@", "Note")
            notes.fetchLimit = 120
            let changes = try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetchRequest: notes)).transactions
            #expect(changes.map(\.token.transactionNumber) == Array(importedNumbers.prefix(120)))
            #expect(changes.allSatisfy { $0.changes?.map(\.changedObjectID.entity.name) == ["Note"] })
        }
    }

    /// A batch delete that follows delete rules (cascade) reads the rows it removes before
    /// detaching anything: their tombstones carry the preserved values, on every store.
    @Test(arguments: StoreKind.allCases)
    func batchDeletesThatCascadeKeepTheirTombstones(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Shelf.self, Book.self), options: [NSPersistentHistoryTrackingKey: true])
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let shelf = Shelf(context: context)
            shelf.label = "Poetry"
            for title in ["Odes", "Sonnets"] {
                let book = Book(context: context)
                (book.title, book.pages, book.shelf) = (title, 100, shelf)
            }
            try context.save()
            _ = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Shelf")))
        }
        let deletes = try history(context).last?.changes ?? []
        #expect(deletes.map(\.changeType) == [.delete, .delete, .delete])
        let tombstones = deletes.compactMap(\.tombstone)
        #expect(Set(tombstones.compactMap { $0["label"] as? String }) == ["Poetry"])
        #expect(Set(tombstones.compactMap { $0["title"] as? String }) == ["Odes", "Sonnets"])
        #expect(tombstones.allSatisfy { $0["pages"] == nil })
    }

}

/// A shelf whose books go with it (cascade), each keeping a value in its tombstone.
@Managed
final class Shelf: ManagedObject {
    @Attribute(.preserveValueOnDeletion) var label: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: [Book] = []
}

@Managed
final class Book: ManagedObject {
    var pages: Int32 = 0
    @Attribute(.preserveValueOnDeletion) var title: String = ""
    var shelf: Shelf?
}
