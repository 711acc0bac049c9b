import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct ParentChildTests {
    private func count(_ stack: TestStack) throws -> Int {
        let check = stack.container.newBackgroundContext()
        return try check.performAndWait { try check.count(for: Note.fetchRequest()) }
    }

    private func child(of parent: ManagedObjectContext, _ type: ManagedObjectContext.ConcurrencyType = .privateQueue) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: type)
        context.parent = parent
        return context
    }

    @Test(arguments: StoreKind.allCases)
    func aChildSavePushesIntoTheParentAndOnlyTheRootWritesTheStore(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let root = stack.container.newBackgroundContext()
        let middle = child(of: root)
        let leaf = child(of: middle)
        let leafNote = try leaf.performAndWait { () throws in
            let note = Note(context: leaf)
            note.id = 7
            note.text1 = "from the leaf"
            try leaf.save()
            #expect(!leaf.hasChanges)
            #expect(note.objectID.isTemporaryID)
            return note
        }
        let id = leafNote.objectID
        #expect(try count(stack) == 0)
        middle.performAndWait {
            #expect(middle.hasChanges)
            #expect((middle.registeredObject(for: id) as? Note)?.text1 == "from the leaf")
            #expect(middle.insertedObjects.map(\.objectID) == [id])
        }
        try middle.performAndWait { () throws in try middle.save() }
        #expect(try count(stack) == 0)
        try root.performAndWait { () throws in
            let note = try #require(root.registeredObject(for: id) as? Note)
            #expect(note.objectID.isTemporaryID)
            try root.save()
            #expect(!note.objectID.isTemporaryID)
        }
        #expect(try count(stack) == 1)
        leaf.performAndWait {
            // The leaf's object keeps its temporary ID, as in Core Data.
            #expect(leafNote.objectID.isTemporaryID)
            #expect(leafNote.text1 == "from the leaf")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChildFetchSeesTheParentsUnsavedChanges(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let root = stack.container.newBackgroundContext()
        let ids = try root.performAndWait { () throws in
            let notes = (1...3).map { i -> Note in
                let note = Note(context: root)
                note.id = Int32(i)
                return note
            }
            try root.save()
            return notes.map(\.objectID)
        }
        let keep = try root.performAndWait { () throws in
            let notes = try ids.map { try root.existingObject(with: $0) as? Note }
            notes[0]?.text1 = "changed in the parent"
            root.delete(notes[1]!)
            let added = Note(context: root)
            added.id = 4
            return notes + [added]
        }
        let child = child(of: root)
        try child.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let notes = try child.fetch(request)
            #expect(notes.map(\.id) == [1, 3, 4])
            #expect(notes.first?.text1 == "changed in the parent")
            request.predicate = NSPredicate(format: "text1 != nil")
            #expect(try child.count(for: request) == 1)
            request.predicate = nil
            request.fetchLimit = 1
            request.fetchOffset = 1
            #expect(try child.fetch(request).map(\.id) == [3])
            let fault = child.object(with: ids[0]) as? Note
            #expect(fault?.text1 == "changed in the parent")
        }
        _ = keep
    }

    /// A child's fetch sees its parent's unsaved changes by the same rules as the parent's own
    /// fetch: only objects of the fetched entity (or its sub-entities), matching the predicate.
    @Test(arguments: StoreKind.allCases)
    func aChildSeesItsParentsUnsavedObjectsOfTheFetchedEntityOnly(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: zooModel())
        let parent = stack.container.newBackgroundContext()
        try parent.performAndWait { () throws in
            let rex = Dog(context: parent)
            rex.name = "Rex"
            try parent.save()
            rex.breed = "collie"
            Cat(context: parent).name = "Tom"
            Dog(context: parent).name = "Fido"
        }
        let child = child(of: parent)
        try child.performAndWait { () throws in
            let dogs = Dog.fetchRequest()
            dogs.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try child.fetch(dogs).map(\.name) == ["Fido", "Rex"])
            #expect(try child.count(for: dogs) == 2)
            let animals = Animal.fetchRequest()
            animals.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try child.fetch(animals).map(\.name) == ["Fido", "Rex", "Tom"])
            let collies = Dog.fetchRequest()
            collies.predicate = NSPredicate(format: "breed == 'collie'")
            #expect(try child.fetch(collies).map(\.name) == ["Rex"])
        }
    }

    @Test func theClassicWriterMainChildStack() async throws {
        let stack = try TestStack(.sqlite)
        let writer = stack.container.newBackgroundContext()
        writer.name = "writer"
        let main = ManagedObjectContext(concurrencyType: .mainQueue)
        main.parent = writer
        let importer = ManagedObjectContext(concurrencyType: .privateQueue)
        importer.parent = main
        try await importer.perform { () throws in
            for i in 0..<10 {
                let note = Note(context: importer)
                note.id = Int32(i)
            }
            try importer.save()
        }
        let visible = try await main.perform { () throws in
            let seen = try main.count(for: Note.fetchRequest())
            try main.save()
            return seen
        }
        #expect(visible == 10)
        #expect(try count(stack) == 0)
        try await writer.perform { try writer.save() }
        #expect(try count(stack) == 10)
    }

    @Test func aMainQueueChildOfAMainQueueParentWorksFromTheMainQueue() async throws {
        let stack = try TestStack(.inMemory)
        let main = stack.container.viewContext
        let child = child(of: main)
        // performAndWait on the child from the main queue, which then uses its main-queue parent.
        let total = try await main.perform { () throws in
            try child.performAndWait { () throws in
                _ = Note(context: child)
                try child.save()
            }
            return main.insertedObjects.count
        }
        #expect(total == 1)
    }

    /// Setting a property to the value it already has changes nothing: the child's save does not
    /// push it over a value the parent set since, and a refresh keeping changes does not keep it
    /// over a newer row. A value set back to the committed one after another is a change.
    @Test(arguments: StoreKind.allCases)
    func aValueSetAgainIsNoChangeToPushOrKeep(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Probe.self, Label.self))
        let parent = stack.container.newBackgroundContext()
        try parent.performAndWait { () throws in
            let probe = Probe(context: parent)
            probe.code = "p"
            probe.title = "first"
            try parent.save()
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait { () throws in
            let probe = try child.fetch(Probe.fetchRequest())[0]
            probe.title = "first"
            #expect(!probe.isUpdated && !child.hasChanges)
        }
        try parent.performAndWait { () throws in
            try parent.fetch(Probe.fetchRequest())[0].title = "parent's"
        }
        try child.performAndWait { try child.save() }
        #expect(try parent.performAndWait { try parent.fetch(Probe.fetchRequest())[0].title } == "parent's")

        // The same through a refresh: the child's re-set value gives way to the parent's newer one.
        try child.performAndWait { () throws in
            let probe = try child.fetch(Probe.fetchRequest())[0]
            probe.title = probe.title
            probe.code = "changed"
        }
        try parent.performAndWait { () throws in
            try parent.fetch(Probe.fetchRequest())[0].title = "newer"
        }
        try child.performAndWait { () throws in
            child.refreshAllObjects()
            let probe = try child.fetch(Probe.fetchRequest())[0]
            #expect(probe.title == "newer")
            #expect(probe.code == "changed")
            // Changed and changed back: the user's last word stands.
            probe.title = "other"
            probe.title = "newer"
        }
        try parent.performAndWait { () throws in
            try parent.fetch(Probe.fetchRequest())[0].title = "newest"
        }
        try child.performAndWait { try child.save() }
        #expect(try parent.performAndWait { try parent.fetch(Probe.fetchRequest())[0].title } == "newer")
    }
}
