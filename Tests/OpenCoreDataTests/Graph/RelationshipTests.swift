import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct RelationshipTests {
    @Test(arguments: StoreKind.allCases)
    func settingOneSideUpdatesTheOtherImmediately(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let inbox = Folder(context: context)
            let archive = Folder(context: context)
            let memo = Memo(context: context)
            memo.folder = inbox
            #expect(inbox.memos == [memo])
            // Moving between parents: the old parent forgets it.
            memo.folder = archive
            #expect(inbox.memos.isEmpty)
            #expect(archive.memos == [memo])
            // From the to-many side.
            inbox.memos.insert(memo)
            #expect(memo.folder === inbox)
            #expect(archive.memos.isEmpty)
            // Many-to-many from both sides.
            let swift = Tag(context: context)
            let linux = Tag(context: context)
            memo.tags = [swift, linux]
            #expect(swift.memos == [memo])
            linux.memos.remove(memo)
            #expect(memo.tags == [swift])
            try context.save()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theGraphSurvivesARoundTripThroughTheStore(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let writer = stack.container.newBackgroundContext()
        let (folderID, memoIDs) = try writer.performAndWait { () throws in
            let folder = Folder(context: writer)
            folder.title = "Inbox"
            let tag = Tag(context: writer)
            tag.name = "swift"
            var memos: [Memo] = []
            for index in 0..<3 {
                let memo = Memo(context: writer)
                memo.body = "memo \(index)"
                memo.folder = folder
                if index != 1 { memo.tags.insert(tag) }
                memos.append(memo)
            }
            try writer.save()
            #expect(!folder.objectID.isTemporaryID)
            return (folder.objectID, memos.map(\.objectID))
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let folder = try #require(try reader.existingObject(with: folderID) as? Folder)
            #expect(folder.title == "Inbox")
            #expect(Set(folder.memos.map(\.body)) == ["memo 0", "memo 1", "memo 2"])
            let memo0 = try #require(reader.object(with: memoIDs[0]) as? Memo)
            #expect(memo0.folder === folder)
            #expect(memo0.tags.map(\.name) == ["swift"])
            let tag = try #require(memo0.tags.first)
            #expect(Set(tag.memos.map(\.objectID)) == [memoIDs[0], memoIDs[2]])
            // Change the graph and save again.
            let memo1 = try #require(reader.object(with: memoIDs[1]) as? Memo)
            memo1.tags.insert(tag)
            memo0.tags = []
            memo0.folder = nil
            try reader.save()
        }
        let third = stack.container.newBackgroundContext()
        try third.performAndWait { () throws in
            let folder = try #require(third.object(with: folderID) as? Folder)
            #expect(Set(folder.memos.map(\.objectID)) == [memoIDs[1], memoIDs[2]])
            let memo1 = try #require(third.object(with: memoIDs[1]) as? Memo)
            #expect(memo1.tags.map(\.name) == ["swift"])
            #expect(try #require(third.object(with: memoIDs[0]) as? Memo).tags.isEmpty)
        }
    }
}

@Suite(.dedicatedThread) struct ChildContextGraphTests {
    @Test(arguments: StoreKind.allCases)
    func aChildsGraphChangesReachTheParentAndTheStore(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let parent = stack.container.newBackgroundContext()
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        let folderID = try child.performAndWait { () throws in
            let folder = Folder(context: child)
            folder.title = "drafts"
            let tag = Tag(context: child)
            tag.name = "idea"
            for body in ["one", "two"] {
                let memo = Memo(context: child)
                memo.body = body
                memo.folder = folder
                memo.tags.insert(tag)
            }
            try child.save()       // into the parent
            return folder.objectID
        }
        try parent.performAndWait { () throws in
            let folder = try #require(parent.object(with: folderID) as? Folder)
            #expect(Set(folder.memos.map(\.body)) == ["one", "two"])
            #expect(folder.memos.allSatisfy { $0.tags.map(\.name) == ["idea"] })
            try parent.save()      // into the store
        }
        // The child sees the parent's graph; a later change in the child goes through too.
        try child.performAndWait { () throws in
            let folder = try #require(child.object(with: folderID) as? Folder)
            let one = try #require(folder.memos.first { $0.body == "one" })
            one.tags = []
            try child.save()
        }
        try parent.performAndWait { () throws in try parent.save() }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let memos = try reader.fetch(FetchRequest<Memo>(entityName: "Memo"))
            #expect(Dictionary(uniqueKeysWithValues: memos.map { ($0.body, $0.tags.count) }) == ["one": 0, "two": 1])
            #expect(memos.allSatisfy { $0.folder?.title == "drafts" })
        }
    }
}

@Suite(.dedicatedThread) struct PrefetchingTests {
    @Test func prefetchedRelationshipsNeedNoFurtherQueries() throws {
        let stack = try TestStack(.sqlite, model: graphModel())
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            for title in ["a", "b", "c"] {
                let folder = Folder(context: writer)
                folder.title = title
                let drawer = Drawer(context: writer)
                drawer.label = "drawer " + title
                folder.drawer = drawer
                for index in 0..<3 {
                    let memo = Memo(context: writer)
                    memo.body = "\(title)\(index)"
                    memo.folder = folder
                }
            }
            try writer.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let request = FetchRequest<Memo>(entityName: "Memo")
            request.relationshipKeyPathsForPrefetching = ["folder.memos", "folder.drawer"]
            let memos = try reader.fetch(request)
            #expect(memos.count == 9)
            // To-one destinations arrived with their values, two levels deep.
            let folders = Set(memos.compactMap(\.folder))
            #expect(folders.count == 3 && folders.allSatisfy { !$0.isFault })
            #expect(folders.allSatisfy { $0.drawer.map { !$0.isFault } == true })
            // To-many members were loaded with the fetch: a row deleted behind the context's back
            // afterwards is still a member, because nothing asks the store again.
            let raw = try RawSQLite(stack.storeURL, writable: true)
            _ = try raw.rows("DELETE FROM ZMEMO WHERE ZBODY = 'a0'")
            let a = try #require(folders.first { $0.title == "a" })
            #expect(a.memos.count == 3)
        }
    }
}

@Suite(.dedicatedThread) struct GraphMergingTests {
    @Test(arguments: StoreKind.allCases)
    func anotherContextsRelationshipChangesArriveByMerging(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: graphModel())
        let viewer = stack.container.newBackgroundContext()
        let writer = stack.container.newBackgroundContext()
        let folderID = try writer.performAndWait { () throws in
            let folder = Folder(context: writer)
            Memo(context: writer).folder = folder
            try writer.save()
            return folder.objectID
        }
        let held = try viewer.performAndWait { () throws in
            let folder = try #require(viewer.object(with: folderID) as? Folder)
            #expect(folder.memos.count == 1)
            return folder
        }
        let notifications = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { notifications.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try writer.performAndWait { () throws in
            let folder = try #require(writer.object(with: folderID) as? Folder)
            let second = Memo(context: writer)
            second.body = "second"
            folder.memos.insert(second)
            try writer.save()
        }
        let saved = try #require(notifications.values.first)
        viewer.performAndWait {
            #expect(held.memos.count == 1)              // not merged yet: the loaded members stay
            viewer.mergeChanges(fromContextDidSave: saved)
            #expect(held.memos.count == 2)
            #expect(held.memos.contains { $0.body == "second" })
        }
    }

    /// A many-to-many between objects of one entity (`follows` ↔ `followers`): both sides name
    /// one join table with its columns the other way round; each pair reads back the right way
    /// round, whichever side it was made from. (A store copy reports pairs from both sides in
    /// one request: `PostgreSQLMigrationTests` moves DuckDuckGo's bookmarks, whose favourites are
    /// such a relationship.)
    @Test(arguments: StoreKind.allCases)
    func aManyToManyWithinOneEntityKeepsItsDirection(kind: StoreKind) throws {
        let person = EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "follows", destination: "Person", toMany: true, inverse: "followers"),
            RelationshipDescription(name: "followers", destination: "Person", toMany: true, inverse: "follows"),
        ])
        let stack = try TestStack(kind, model: ManagedObjectModel(entities: [person]))
        let writer = stack.container.newBackgroundContext()
        try writer.performAndWait { () throws in
            let people = Dictionary(uniqueKeysWithValues: ["ann", "bob", "cy", "dee"].map { name in
                let object = ManagedObject(entity: person, insertInto: writer)
                object.setValue(name, forKey: "name")
                return (name, object)
            })
            people["ann"]!.setValue(Set([people["bob"]!, people["cy"]!]), forKey: "follows")
            people["dee"]!.setValue(Set([people["bob"]!]), forKey: "followers")      // bob follows dee
            try writer.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let everyone = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            func names(_ object: ManagedObject, _ key: String) -> [String] {
                (object.value(forKey: key) as? Set<ManagedObject> ?? []).compactMap { $0.value(forKey: "name") as? String }.sorted()
            }
            let found = Dictionary(uniqueKeysWithValues: everyone.map { ($0.value(forKey: "name") as? String ?? "", (names($0, "follows"), names($0, "followers"))) })
            #expect(found["ann"]?.0 == ["bob", "cy"] && found["ann"]?.1 == [])
            #expect(found["bob"]?.0 == ["dee"] && found["bob"]?.1 == ["ann"])
            #expect(found["cy"]?.0 == [] && found["cy"]?.1 == ["ann"])
            #expect(found["dee"]?.0 == [] && found["dee"]?.1 == ["bob"])
        }
    }
}
