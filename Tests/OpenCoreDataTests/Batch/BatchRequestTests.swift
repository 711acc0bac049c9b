import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct BatchRequestTests {
    private func rows(_ range: ClosedRange<Int>, title: String) -> [[String: Any]] {
        range.map { ["code": "q\($0)", "title": title, "medium": Int32($0), "ratio": Double($0) / 10] }
    }

    @Test(arguments: StoreKind.allCases)
    func batchInsertWritesRowsWithResultTypesAndUpsertsOnTheUniqueConstraint(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let status = try context.execute(BatchInsertRequest(entityName: "Sample", objects: rows(1...500, title: "first")))
            #expect(status.result as? Bool == true)
            let counting = BatchInsertRequest(entityName: "Sample", objects: rows(501...1000, title: "first"))
            counting.resultType = .count
            #expect(try context.execute(counting).result as? Int == 500)
            #expect(try context.count(for: Sample.fetchRequest()) == 1000)

            // Re-importing overlapping rows updates them instead of duplicating.
            let again = BatchInsertRequest(entityName: "Sample", objects: rows(900...1100, title: "second"))
            again.resultType = .objectIDs
            let ids = try #require(try context.execute(again).result as? [ManagedObjectID])
            #expect(ids.count == 201)
            #expect(try context.count(for: Sample.fetchRequest()) == 1100)
            let request = Sample.fetchRequest()
            request.predicate = NSPredicate(format: "code == 'q950'")
            let sample = try #require(try context.fetch(request).first)
            #expect(sample.title == "second" && sample.medium == 950 && sample.ratio == 95)
            #expect(ids.contains(sample.objectID))
        }
        if kind == .sqlite {
            let db = try RawSQLite(stack.storeURL)
            #expect(try db.rows("SELECT Z_OPT FROM ZSAMPLE WHERE ZCODE = 'q1'").first?.first as? Int64 == 1)
            #expect(try db.rows("SELECT Z_OPT FROM ZSAMPLE WHERE ZCODE = 'q950'").first?.first as? Int64 == 2)
            let max = try db.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Sample'").first?.first as? Int64 ?? 0
            let highest = try db.rows("SELECT MAX(Z_PK) FROM ZSAMPLE").first?.first as? Int64 ?? .max
            #expect(max >= highest)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func badRowsAreErrorsNamingTheRowAndKey(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        context.performAndWait {
            let wrongType = #expect(throws: CoreDataError.self) {
                try context.execute(BatchInsertRequest(entityName: "Sample", objects: [["code": "a"], ["code": "b", "medium": "many"]]))
            }
            #expect(wrongType?.message.contains("Row 1") == true)
            #expect(wrongType?.key == "medium")
            let unknown = #expect(throws: CoreDataError.self) {
                try context.execute(BatchInsertRequest(entityName: "Sample", objects: [["code": "a", "colour": "red"]]))
            }
            #expect(unknown?.key == "colour")
            #expect(throws: CoreDataError.self) { try context.execute(BatchInsertRequest(entityName: "Nope", objects: [])) }
            #expect((try? context.count(for: Sample.fetchRequest())) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func streamingHandlers(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.container.newBackgroundContext()
        let entity = try #require(stack.container.managedObjectModel.entitiesByName["Note"])
        try context.performAndWait { () throws in
            var next = 0
            let dictionaries = BatchInsertRequest(entity: entity, dictionaryHandler: { dictionary in
                next += 1
                guard next <= 3 else { return true }
                dictionary["id"] = Int32(next)
                return false
            })
            _ = try context.execute(dictionaries)
            var more = 10
            let objects = BatchInsertRequest(entity: entity, managedObjectHandler: { object in
                more += 1
                guard more <= 12 else { return true }
                (object as? Note)?.id = Int32(more)
                (object as? Note)?.text1 = "from an object"
                return false
            })
            _ = try context.execute(objects)
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            #expect(try context.fetch(request).map(\.id) == [1, 2, 3, 11, 12])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchUpdateBumpsVersionsSoEditedCopiesConflict(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...10)
        let editor = stack.container.newBackgroundContext()
        let edited = try editor.performAndWait { () throws -> Note? in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id == 2")
            let note = try editor.fetch(request).first
            note?.text2 = "local edit"
            return note
        }
        try context.performAndWait { () throws in
            let update = BatchUpdateRequest(entityName: "Note", predicate: NSPredicate(format: "id <= 5"), propertiesToUpdate: ["text1": "batched"])
            update.resultType = .updatedObjectsCountResultType
            #expect(try context.execute(update).result as? Int == 5)
            update.resultType = .updatedObjectIDsResultType
            update.propertiesToUpdate = ["text3": "again"]
            #expect((try context.execute(update).result as? [ManagedObjectID])?.count == 5)
            let bad = BatchUpdateRequest(entityName: "Note", predicate: nil, propertiesToUpdate: ["id": "x"])
            #expect(throws: CoreDataError.self) { try context.execute(bad) }
        }
        editor.performAndWait {
            let error = #expect(throws: CoreDataError.self) { try editor.save() }
            #expect(error?.code == .managedObjectMerge)
            #expect(error?.conflicts.first?.sourceObject === edited)
            #expect(error?.conflicts.first?.newVersionNumber == 3)
        }
        let check = stack.container.newBackgroundContext()
        try check.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "text1 == 'batched' AND text3 == 'again'")
            #expect(try check.count(for: request) == 5)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchDeleteAndTheMergeRecipe(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = try stack.seededContext(ids: 1...10)
        let viewer = stack.container.newBackgroundContext()
        let held = try viewer.performAndWait { () throws in try viewer.fetch(Note.fetchRequest()) }
        let ids = try context.performAndWait { () throws -> [ManagedObjectID] in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id > 7")
            let delete = BatchDeleteRequest(fetchRequest: request)
            delete.resultType = .resultTypeObjectIDs
            let ids = try #require(try context.execute(delete).result as? [ManagedObjectID])
            #expect(ids.count == 3)
            let byID = BatchDeleteRequest(objectIDs: [held[0].objectID])
            byID.resultType = .resultTypeCount
            #expect(try context.execute(byID).result as? Int == 1)
            #expect(try context.count(for: Note.fetchRequest()) == 6)
            return ids + [held[0].objectID]
        }
        // Batch requests bypass contexts; merging the IDs brings them up to date.
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [viewer])
        viewer.performAndWait {
            #expect(held.filter(\.isDeleted).count == 4)
            #expect((try? viewer.fetch(Note.fetchRequest()).count) == 6)
        }
    }

    /// Upserts match as the SQL stores' unique index does: never on nil (NULLs are distinct), and
    /// across the table of a hierarchy (the index spans it), keeping the matched row's entity.
    @Test(arguments: StoreKind.allCases)
    func batchInsertUpsertsMatchAsTheUniqueIndexDoes(kind: StoreKind) throws {
        let vehicle = EntityDescription(name: "Vehicle", properties: [AttributeDescription(name: "plate", type: .string), AttributeDescription(name: "colour", type: .string)])
        vehicle.uniquenessConstraints = [["plate"]]
        let truck = EntityDescription(name: "Truck", properties: [AttributeDescription(name: "load", type: .integer64)])
        vehicle.subentities = [truck]
        let stack = try TestStack(kind, model: ManagedObjectModel(entities: [vehicle, truck]))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            _ = try context.execute(BatchInsertRequest(entityName: "Vehicle", objects: [["colour": "red"], ["colour": "blue"], ["plate": "A1", "colour": "green"]]))
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Vehicle")) == 3, "rows without a plate never match")
            _ = try context.execute(BatchInsertRequest(entityName: "Truck", objects: [["plate": "A1", "colour": "white", "load": 7], ["plate": "B2", "colour": "black", "load": 9]]))
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle"))
            #expect(all.count == 4, "A1 is matched across the hierarchy")
            let a1 = try #require(all.first { $0.value(forKey: "plate") as? String == "A1" })
            #expect(a1.entity.name == "Vehicle", "the matched row keeps its entity")
            #expect(a1.value(forKey: "colour") as? String == "white")
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Truck")) == 1)
        }
    }

    /// Keys are matched to attributes by name whatever their order, for a narrow entity (names
    /// compared in turn: equal lengths, shared prefixes, a name that is a prefix of another) and a
    /// wide one (names hashed); a key no attribute has is refused on both.
    @Test(arguments: StoreKind.allCases, [3, 40])
    func everyKeyFindsItsAttributeWhateverTheOrder(kind: StoreKind, width: Int) throws {
        let names = ["ab", "ba", "a", "abc", "ab2", "b"] + (0..<width).map { "wide\($0)" }
        let attributes = names.map { AttributeDescription(name: $0, type: .integer64, isOptional: true) }
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Keys", managedObjectClass: ManagedObject.self, properties: attributes)])
        let stack = try TestStack(kind, model: model)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            // Row r gives attribute i the value r * 1000 + i, each row with its keys in another order
            // and some keys left out.
            let rows: [[String: Any]] = (0..<20).map { row in
                var dictionary: [String: Any] = [:]
                for (index, name) in names.enumerated().shuffled() where (index + row) % 3 != 0 {
                    dictionary[name] = Int64(row * 1000 + index)
                }
                return dictionary
            }
            _ = try context.execute(BatchInsertRequest(entityName: "Keys", objects: rows))
            let stored = try context.fetch(FetchRequest<ManagedObject>(entityName: "Keys"))
            #expect(stored.count == rows.count)
            var byRow: [Int64: ManagedObject] = [:]
            for object in stored {
                let present = names.indices.first { object.value(forKey: names[$0]) != nil }
                if let present, let value = object.value(forKey: names[present]) as? Int64 { byRow[value / 1000] = object }
            }
            for (row, dictionary) in rows.enumerated() {
                let object = try #require(byRow[Int64(row)])
                for name in names {
                    #expect(object.value(forKey: name) as? Int64 == dictionary[name] as? Int64, "row \(row), \(name)")
                }
            }
            let unknown = #expect(throws: CoreDataError.self) {
                try context.execute(BatchInsertRequest(entityName: "Keys", objects: [["ab": Int64(1), "abd": Int64(2)]]))
            }
            #expect(unknown?.key == "abd")
        }
    }

    /// A row that collides with the unique constraint — with a stored row or one inserted earlier
    /// in the same request — updates that row: its ID comes back, its values are the row's, and
    /// history records an update of it; the other rows are inserts.
    @Test(arguments: StoreKind.allCases)
    func collidingRowsUpdateTheirRowAndAreUpdatesInHistory(kind: StoreKind) throws {
        let stack = try TestStack(kind, options: [NSPersistentHistoryTrackingKey: true])
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let first = BatchInsertRequest(entityName: "Sample", objects: [["code": "q1", "title": "one"], ["code": "q2", "title": "two"]])
            first.resultType = .objectIDs
            let before = try #require(try context.execute(first).result as? [ManagedObjectID])
            let token = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.last?.token
            let second = BatchInsertRequest(entityName: "Sample", objects: [
                ["code": "q2", "title": "two again"], ["code": "q3", "title": "three"],
                ["code": "q3", "title": "three again"], ["code": "q1", "title": "one again"],
            ])
            second.resultType = .objectIDs
            let after = try #require(try context.execute(second).result as? [ManagedObjectID])
            #expect(after.count == 4)
            #expect(after[0] == before[1] && after[3] == before[0] && after[1] == after[2])
            #expect(!before.contains(after[1]))
            let request = Sample.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            #expect(try context.fetch(request).map(\.title) == ["one again", "two again", "three again"])
            let changes = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions.flatMap { $0.changes ?? [] }
            #expect(changes.map(\.changeType) == [.update, .insert, .update, .update])
            #expect(changes.map(\.changedObjectID) == after)
        }
    }
}
