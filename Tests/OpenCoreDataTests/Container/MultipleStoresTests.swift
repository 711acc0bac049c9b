import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Several stores in one coordinator, as apps with configurations use them: entities routed to
/// the store whose configuration holds them, fetches across stores, saves split across stores.
@Suite(.dedicatedThread) struct MultipleStoresTests {
    /// A container with one store per (configuration, file name), SQLite or in memory.
    private func container(_ model: ManagedObjectModel, _ stores: [(configuration: String?, file: String?)], in directory: TemporaryDirectory) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Multi", managedObjectModel: model)
        container.persistentStoreDescriptions = stores.map { store in
            let description = store.file.map { PersistentStoreDescription(url: directory.file($0)) } ?? PersistentStoreDescription(type: .inMemory)
            description.configuration = store.configuration
            return description
        }
        try container.loadPersistentStores()
        return container
    }

    /// `fetchLimit = Int.max` with an offset, across stores: each store is asked for the rows up
    /// to the end of the window, which is "all of them", not an overflow.
    @Test func aLimitOfIntMaxWithAnOffsetAcrossStoresIsEverythingAfterTheOffset() throws {
        let directory = TemporaryDirectory()
        let container = try container(ManagedObjectModel(Note.self, Sample.self), [(nil, "A.sqlite"), (nil, "B.sqlite")], in: directory)
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait { () throws in
            for id in 1...4 { Note(context: context).id = Int32(id) }
            try context.save()
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            request.fetchLimit = Int.max
            request.fetchOffset = 1
            return try context.fetch(request).map(\.id)
        }
        #expect(ids == [2, 3, 4])
    }

    @Test func entitiesGoToTheStoreWhoseConfigurationHoldsThem() throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(Note.self, Sample.self)
        model.configurations = ["Local": ["Note"], "Shared": ["Sample"]]
        let container = try container(model, [("Local", "Local.sqlite"), ("Shared", "Shared.sqlite")], in: directory)
        let (local, shared) = (container.persistentStoreCoordinator.persistentStores[0], container.persistentStoreCoordinator.persistentStores[1])
        let context = container.newBackgroundContext()
        let (noteID, sampleID) = try context.performAndWait { () throws in
            let note = Note(context: context)
            note.id = 7
            let sample = Sample(context: context)
            sample.code = "s1"
            try context.save()     // one save, written to two stores
            return (note.objectID, sample.objectID)
        }
        #expect(noteID.storeIdentifier == local.identifier)
        #expect(sampleID.storeIdentifier == shared.identifier)
        // On disk: each row in its own store only.
        #expect(try RawSQLite(directory.file("Local.sqlite")).rows("SELECT ZID FROM ZNOTE").map { $0[0] as? Int64 } == [7])
        #expect(try RawSQLite(directory.file("Shared.sqlite")).rows("SELECT COUNT(*) FROM ZNOTE")[0][0] as? Int64 == 0)
        #expect(try RawSQLite(directory.file("Shared.sqlite")).rows("SELECT ZCODE FROM ZSAMPLE").map { $0[0] as? String } == ["s1"])
        #expect(try RawSQLite(directory.file("Local.sqlite")).rows("SELECT COUNT(*) FROM ZSAMPLE")[0][0] as? Int64 == 0)
        // Another context finds both, each through its store.
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            #expect(try reader.fetch(Note.fetchRequest()).map(\.id) == [7])
            #expect(try reader.fetch(Sample.fetchRequest()).map(\.code) == ["s1"])
            #expect((try reader.existingObject(with: sampleID) as? Sample)?.code == "s1")
        }
    }

    @Test func aConfigurationTheModelLacksIsRefused() throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(Note.self, Sample.self)
        model.configurations = ["Local": ["Note"]]
        let error = #expect(throws: CoreDataError.self) {
            _ = try container(model, [("Remote", "R.sqlite")], in: directory)
        }
        #expect(error?.message.contains("no configuration named 'Remote'") == true)
        #expect(error?.message.contains("Local") == true)
    }

    @Test(arguments: [false, true])
    func fetchesCountsAndBatchesSpanTheStoresThatHoldAnEntity(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let container = try container(ManagedObjectModel(Note.self, Sample.self),
                                      [(nil, inMemory ? nil : "A.sqlite"), (nil, inMemory ? nil : "B.sqlite")], in: directory)
        let stores = container.persistentStoreCoordinator.persistentStores
        let context = container.newBackgroundContext()
        // Odd ids in A (the first store, where new objects go), even ids assigned to B: the
        // primary keys collide across the stores (1, 2, 3… in each).
        try context.performAndWait { () throws in
            for id in 1...20 {
                let note = Note(context: context)
                note.id = Int32(id)
                note.text1 = id % 3 == 0 ? "fizz" : nil
                if id % 2 == 0 { try context.assign(note, to: stores[1]) }
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let all = try reader.fetch(Note.fetchRequest())
            #expect(Set(all.map(\.id)) == Set(1...20))
            #expect(Set(all.filter { $0.id % 2 == 0 }.map(\.objectID.storeIdentifier)) == [stores[1].identifier])
            // Order and window across the stores.
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: false)]
            request.fetchOffset = 3
            request.fetchLimit = 5
            #expect(try reader.fetch(request).map(\.id) == [17, 16, 15, 14, 13])
            #expect(try reader.count(for: request) == 5)
            let fizz = Note.fetchRequest()
            fizz.predicate = NSPredicate(format: "text1 == 'fizz'")
            #expect(try reader.count(for: fizz) == 6)
            #expect(try reader.fetch(fizz).count == 6)
            // Object IDs, batches and dictionaries see both stores too.
            let ids = FetchRequest<ManagedObjectID>(entityName: "Note")
            ids.resultType = .managedObjectIDResultType
            #expect(Set(try reader.fetch(ids)).count == 20)
            #expect(try reader.fetchBatched(Note.fetchRequest()).count == 20)
            let sum = FetchRequest<NSDictionary>(entityName: "Note")
            sum.resultType = .dictionaryResultType
            sum.propertiesToFetch = [ExpressionDescription(name: "total", function: "sum:", keyPath: "id")]
            #expect(try reader.fetch(sum).first?["total"] as? Int64 == 210)
        }
        // A batch delete by IDs deletes those objects only, not the rows with the same keys in
        // the other store; one by predicate deletes in every store.
        try reader.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id IN %@", [2, 4])
            let doomed = try reader.fetch(request).map(\.objectID)
            let delete = BatchDeleteRequest(objectIDs: doomed)
            delete.resultType = .resultTypeCount
            #expect(try reader.execute(delete).result as? Int == 2)
            #expect(Set(try reader.fetch(Note.fetchRequest()).map(\.id)) == Set(1...20).subtracting([2, 4]))
            let fizzRequest = FetchRequest<ManagedObject>(entityName: "Note")
            fizzRequest.predicate = NSPredicate(format: "text1 == 'fizz'")
            let fizz = BatchDeleteRequest(fetchRequest: fizzRequest)
            fizz.resultType = .resultTypeObjectIDs
            let deleted = try #require(reader.execute(fizz).result as? [ManagedObjectID])
            #expect(Set(deleted.map(\.storeIdentifier)) == Set(stores.map(\.identifier)))
            #expect(try reader.count(for: Note.fetchRequest()) == 12)
        }
    }

    @Test(arguments: [false, true])
    func affectedStoresLimitFetchesCountsAndBatchesToThoseStores(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let container = try container(ManagedObjectModel(Note.self, Sample.self),
                                      [(nil, inMemory ? nil : "A.sqlite"), (nil, inMemory ? nil : "B.sqlite")], in: directory)
        let stores = container.persistentStoreCoordinator.persistentStores
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for id in 1...10 {
                let note = Note(context: context)
                note.id = Int32(id)
                if id % 2 == 0 { try context.assign(note, to: stores[1]) }
            }
            try context.save()
            // Unsaved: 11 goes to the first store, 12 is assigned to the second.
            let eleven = Note(context: context)
            eleven.id = 11
            let twelve = Note(context: context)
            twelve.id = 12
            try context.assign(twelve, to: stores[1])

            let inB = Note.fetchRequest()
            inB.affectedStores = [stores[1]]
            inB.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            #expect(try context.fetch(inB).map(\.id) == [2, 4, 6, 8, 10, 12])
            #expect(try context.count(for: inB) == 6)
            inB.fetchLimit = 2
            inB.fetchOffset = 1
            #expect(try context.fetch(inB).map(\.id) == [4, 6])
            let inA = Note.fetchRequest()
            inA.affectedStores = [stores[0]]
            inA.includesPendingChanges = false
            #expect(Set(try context.fetch(inA).map(\.id)) == [1, 3, 5, 7, 9])
            let ids = FetchRequest<ManagedObjectID>(entityName: "Note")
            ids.resultType = .managedObjectIDResultType
            ids.affectedStores = [stores[0]]
            ids.includesPendingChanges = false
            #expect(Set(try context.fetch(ids).map(\.storeIdentifier)) == [stores[0].identifier])
            let sum = FetchRequest<NSDictionary>(entityName: "Note")
            sum.resultType = .dictionaryResultType
            sum.propertiesToFetch = [ExpressionDescription(name: "total", function: "sum:", keyPath: "id")]
            sum.affectedStores = [stores[1]]
            sum.includesPendingChanges = false
            #expect(try context.fetch(sum).first?["total"] as? Int64 == 30)
            // A store that does not hold the entity (or is not given) selects nothing.
            let none = Note.fetchRequest()
            none.affectedStores = []
            #expect(try context.fetch(none).isEmpty)
            #expect(try context.count(for: none) == 0)
            context.rollback()
        }
        // Batch requests work on their affected stores only.
        try context.performAndWait { () throws in
            let update = BatchUpdateRequest(entityName: "Note")
            update.propertiesToUpdate = ["text1": "b"]
            update.affectedStores = [stores[1]]
            update.resultType = .updatedObjectsCountResultType
            #expect(try context.execute(update).result as? Int == 5)
            let request = Note.fetchRequest()
            request.affectedStores = [stores[0]]
            let delete = BatchDeleteRequest(fetchRequest: request)
            delete.resultType = .resultTypeCount
            #expect(try context.execute(delete).result as? Int == 5)
            let remaining = Note.fetchRequest()
            remaining.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            context.reset()
            #expect(try context.fetch(remaining).map { "\($0.id)\($0.text1 ?? "")" } == ["2b", "4b", "6b", "8b", "10b"])
        }
    }

    @Test func historyTokensCoverEveryStoreThatRecordsHistory() throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(Note.self, Sample.self)
        model.configurations = ["Local": ["Note"], "Shared": ["Sample"]]
        let container = PersistentContainer(name: "Multi", managedObjectModel: model)
        container.persistentStoreDescriptions = [("Local", "Local.sqlite"), ("Shared", "Shared.sqlite")].map { configuration, file in
            let description = PersistentStoreDescription(url: directory.file(file))
            description.configuration = configuration
            description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
            return description
        }
        try container.loadPersistentStores()
        let (local, shared) = (container.persistentStoreCoordinator.persistentStores[0], container.persistentStoreCoordinator.persistentStores[1])
        let context = container.newBackgroundContext()
        func save(note id: Int32, sample code: String) throws {
            try context.performAndWait { () throws in
                Note(context: context).id = id
                Sample(context: context).code = code
                try context.save()
            }
        }
        try save(note: 1, sample: "a")
        let start = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken())
        #expect(Set(start.transactionNumbers.keys) == [local.identifier, shared.identifier])
        try save(note: 2, sample: "b")
        // After the coordinator's token: the later transaction of each store.
        let transactions = try context.performAndWait {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: start)).transactions
        }
        #expect(transactions.count == 2)
        #expect(Set(transactions.map(\.token.storeIdentifier)) == [local.identifier, shared.identifier])
        // A transaction's token names its store only; affectedStores narrows a request.
        let onlyShared = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        onlyShared.affectedStores = [shared]
        let sharedTransactions = try context.performAndWait { try context.execute(onlyShared).transactions }
        #expect(sharedTransactions.count == 2 && sharedTransactions.allSatisfy { $0.token.storeIdentifier == shared.identifier })
        let afterFirstShared = try context.performAndWait {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: sharedTransactions[0].token)).transactions
        }
        #expect(afterFirstShared.map(\.token) == [sharedTransactions[1].token])
        // The token survives archiving, with every store's position.
        let data = try NSKeyedArchiver.archivedData(withRootObject: start, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: PersistentHistoryToken.self, from: data))
        #expect(decoded == start && decoded.transactionNumbers == start.transactionNumbers)
        let json = try JSONDecoder().decode(PersistentHistoryToken.self, from: JSONEncoder().encode(start))
        #expect(json == start)
    }

    @Test func aSaveSplitAcrossStoresWritesNothingWhenOnePartConflicts() throws {
        let directory = TemporaryDirectory()
        let container = try container(ManagedObjectModel(Note.self, Sample.self), [(nil, "A.sqlite"), (nil, "B.sqlite")], in: directory)
        let stores = container.persistentStoreCoordinator.persistentStores
        let first = container.newBackgroundContext()
        try first.performAndWait { () throws in
            let a = Note(context: first)
            a.id = 1
            let b = Note(context: first)
            b.id = 2
            try first.assign(b, to: stores[1])
            try first.save()
            // Both change; meanwhile another context changes the one in B.
            a.text1 = "first, in A"
            b.text1 = "first, in B"
        }
        let second = container.newBackgroundContext()
        try second.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id == 2")
            try #require(try second.fetch(request).first).text1 = "second, in B"
            try second.save()
        }
        try first.performAndWait { () throws in
            let error = #expect(throws: CoreDataError.self) { try first.save() }
            #expect(error?.code == .managedObjectMerge)
            #expect(first.hasChanges)
        }
        // Nothing of the failed save reached A, although A's part had no conflict.
        #expect(try RawSQLite(directory.file("A.sqlite")).rows("SELECT ZTEXT1 FROM ZNOTE").map { $0[0] as? String } == [nil])
        #expect(try RawSQLite(directory.file("B.sqlite")).rows("SELECT ZTEXT1 FROM ZNOTE").map { $0[0] as? String } == ["second, in B"])
        // With a policy, the retry writes both parts.
        try first.performAndWait { () throws in
            first.mergePolicy = .mergeByPropertyObjectTrump
            try first.save()
        }
        #expect(try RawSQLite(directory.file("A.sqlite")).rows("SELECT ZTEXT1 FROM ZNOTE").map { $0[0] as? String } == ["first, in A"])
        #expect(try RawSQLite(directory.file("B.sqlite")).rows("SELECT ZTEXT1 FROM ZNOTE").map { $0[0] as? String } == ["first, in B"])
    }

    @Test func relationshipsCannotCrossStores() throws {
        let directory = TemporaryDirectory()
        let container = try container(graphModel(), [(nil, "A.sqlite"), (nil, "B.sqlite")], in: directory)
        let stores = container.persistentStoreCoordinator.persistentStores
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let folder = Folder(context: context)
            folder.title = "in A"
            let memo = Memo(context: context)
            memo.body = "in B"
            try context.assign(memo, to: stores[1])
            memo.folder = folder
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.message.contains("relationships cannot cross stores") == true)
            // In one store, the same graph saves.
            let other = Memo(context: context)
            other.body = "in A too"
            folder.memos = [other]
            memo.folder = nil
            try context.save()
        }
        #expect(try RawSQLite(directory.file("A.sqlite")).rows("SELECT COUNT(*) FROM ZMEMO")[0][0] as? Int64 == 1)
        #expect(try RawSQLite(directory.file("B.sqlite")).rows("SELECT ZBODY FROM ZMEMO").map { $0[0] as? String } == ["in B"])
    }

    @Test func assigningChecksTheStoreAndTheObject() throws {
        let directory = TemporaryDirectory()
        let model = ManagedObjectModel(Note.self, Sample.self)
        model.configurations = ["Local": ["Note"], "Shared": ["Sample"]]
        let container = try container(model, [("Local", nil), ("Shared", nil)], in: directory)
        let stores = container.persistentStoreCoordinator.persistentStores
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let note = Note(context: context)
            #expect(throws: CoreDataError.self) { try context.assign(note, to: stores[1]) }   // Shared has no Note
            try context.assign(note, to: stores[0])
            try context.save()
            #expect(throws: CoreDataError.self) { try context.assign(note, to: stores[1]) }
        }
    }

    @Test func objectsOfARemovedStoreAreNotReadFromAnother() throws {
        let directory = TemporaryDirectory()
        let container = try container(ManagedObjectModel(Note.self, Sample.self), [(nil, "A.sqlite"), (nil, "B.sqlite")], in: directory)
        let coordinator = container.persistentStoreCoordinator
        let stores = coordinator.persistentStores
        let context = container.newBackgroundContext()
        let inB = try context.performAndWait { () throws in
            let a = Note(context: context)
            a.id = 1
            let b = Note(context: context)
            b.id = 2
            try context.assign(b, to: stores[1])
            try context.save()
            return b.objectID
        }
        // A change to B's object, then B goes: the save must not write it into A under its key.
        try context.performAndWait { () throws in
            let b = try #require(try context.existingObject(with: inB) as? Note)
            b.text1 = "changed while B was there"
        }
        try coordinator.remove(stores[1])
        try context.performAndWait { () throws in
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.message.contains("not added to this coordinator") == true)
        }
        #expect(try RawSQLite(directory.file("A.sqlite")).rows("SELECT ZID, ZTEXT1 FROM ZNOTE").map { "\($0[0] as? Int64 ?? -1) \($0[1] as? String ?? "nil")" } == ["1 nil"])
        let reader = container.newBackgroundContext()
        try reader.performAndWait { () throws in
            #expect(try reader.fetch(Note.fetchRequest()).map(\.id) == [1])
            // Same primary key as the note in A, but B's object: not A's row.
            #expect(inB.primaryKey == 1)
            #expect(throws: CoreDataError.self) { try reader.existingObject(with: inB) }
        }
    }
}
