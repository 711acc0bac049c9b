import Foundation
import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct FetchedResultsControllerTests {
    /// Notes sorted by text1 (the section) then id, in a background context.
    private func controller(_ stack: TestStack, predicate: String? = nil, sections: Bool = true)
        -> (ManagedObjectContext, FetchedResultsController<Note>, ResultsShadow) {
        let context = stack.container.newBackgroundContext()
        let request = Note.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "text1", ascending: true), NSSortDescriptor(key: "id", ascending: true)]
        if let predicate { request.predicate = FetchPredicate(format: predicate) }
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                  sectionNameKeyPath: sections ? "text1" : nil, cacheName: "notes")
        let shadow = ResultsShadow()
        controller.delegate = shadow
        return (context, controller, shadow)
    }

    private func insert(_ id: Int32, _ section: String?, in context: ManagedObjectContext) -> Note {
        let note = Note(context: context)
        note.id = id
        note.text1 = section
        return note
    }

    private func layout(_ controller: AnyFetchedResultsController) -> [String] {
        (controller.sections ?? []).map { section in
            section.name + ":" + (section.objects ?? []).map { String(($0 as? Note)?.id ?? -1) }.joined(separator: ",")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func performFetchGivesSectionsIndexPathsAndTitles(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let (context, controller, _) = controller(stack)
        try context.performAndWait { () throws in
            #expect(controller.fetchedObjects == nil)
            #expect(controller.sections == nil)
            for (id, section) in [(3, "b"), (1, "a"), (2, "b"), (4, "c"), (5, "apple")] as [(Int32, String)] {
                _ = insert(id, section, in: context)
            }
            try context.save()
            try controller.performFetch()
            #expect(layout(controller) == ["a:1", "apple:5", "b:2,3", "c:4"])
            #expect(controller.fetchedObjects?.map(\.id) == [1, 5, 2, 3, 4])
            let third = controller.object(at: IndexPath(item: 1, section: 2))
            #expect(third.id == 3)
            #expect(controller.indexPath(forObject: third) == IndexPath(item: 1, section: 2))
            #expect(controller.sectionIndexTitles == ["A", "B", "C"])
            #expect(controller.section(forSectionIndexTitle: "B", at: 1) == 2)
            #expect(controller.sections?[1].indexTitle == "A")
            #expect(controller.sections?[2].numberOfObjects == 2)
            #expect(controller.cacheName == "notes")
            let outsider = insert(9, "z", in: context)
            #expect(controller.indexPath(forObject: outsider) == nil)   // not processed yet
        }
    }

    @Test func aRequestWithoutSortDescriptorsOrWithSectionsOutOfOrderIsRefused() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let unsorted = FetchedResultsController(fetchRequest: Note.fetchRequest(), managedObjectContext: context)
            #expect(throws: CoreDataError.self) { try unsorted.performFetch() }
            _ = insert(1, "b", in: context)
            _ = insert(2, "a", in: context)
            _ = insert(3, "b", in: context)
            try context.save()
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "id", ascending: true)]
            let outOfOrder = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "text1", cacheName: nil)
            let error = #expect(throws: CoreDataError.self) { try outOfOrder.performFetch() }
            #expect(error?.message.contains("out of order section name") == true)
            let unknownKey = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "nope", cacheName: nil)
            #expect(throws: CoreDataError.self) { try unknownKey.performFetch() }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func localChangesAreReportedAtProcessPendingChangesInCoreDataOrder(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let (context, controller, shadow) = controller(stack)
        try context.performAndWait { () throws in
            let one = insert(1, "a", in: context)
            let two = insert(2, "a", in: context)
            try context.save()
            try controller.performFetch()
            shadow.load(from: controller)

            _ = insert(3, "b", in: context)
            #expect(shadow.calls.isEmpty)                    // nothing until the end of the event
            context.processPendingChanges()
            #expect(shadow.calls == [.will, .section(.insert, 1, "b"), .object(.insert, nil, IndexPath(item: 0, section: 1)), .did])

            shadow.calls = []
            one.text2 = "not a sort key"
            context.processPendingChanges()
            #expect(shadow.calls == [.will, .object(.update, IndexPath(item: 0, section: 0), IndexPath(item: 0, section: 0)), .did])

            shadow.calls = []
            one.id = 5                                       // a sort key: moves behind two
            context.processPendingChanges()
            #expect(shadow.calls == [.will, .object(.move, IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 0)), .did])

            shadow.calls = []
            context.delete(two)
            context.processPendingChanges()
            #expect(shadow.calls == [.will, .object(.delete, IndexPath(item: 0, section: 0), nil), .did])

            shadow.calls = []
            one.text1 = "b"                                  // the last of section a leaves it
            context.processPendingChanges()
            #expect(shadow.calls.first == .will && shadow.calls.last == .did)
            #expect(shadow.calls.contains(.section(.delete, 0, "a")))
            #expect(shadow.calls.contains(.object(.move, IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 0))))
            #expect(layout(controller) == ["b:3,5"])
            #expect(shadow.sections == ResultsShadow.sections(of: try context.fetch(controller.fetchRequest)) { ($0 as? Note)?.text1 ?? "" })
            #expect(shadow.problems.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anObjectChangedElsewhereThatStartsToMatchJoinsEvenWhenItWasNeverRegisteredHere(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let (context, controller, shadow) = controller(stack, predicate: "id >= 10")
        let other = stack.container.newBackgroundContext()
        let id = try other.performAndWait { () throws in
            let note = insert(1, "a", in: other)
            try other.save()
            return note.objectID
        }
        try context.performAndWait { () throws in
            try controller.performFetch()
            shadow.load(from: controller)
            #expect(controller.fetchedObjects?.isEmpty == true)
            #expect(context.registeredObject(for: id) == nil)
        }
        let saved = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try other.performAndWait { () throws in
            (other.object(with: id) as? Note)?.id = 12
            try other.save()
        }
        let notification = try #require(saved.values.first)
        try context.performAndWait { () throws in
            context.mergeChanges(fromContextDidSave: notification)
            #expect(controller.fetchedObjects?.map(\.id) == [12])
            #expect(shadow.calls == [.will, .section(.insert, 0, "a"), .object(.insert, nil, IndexPath(item: 0, section: 0)), .did])
            #expect(shadow.sections == ResultsShadow.sections(of: try context.fetch(controller.fetchRequest)) { ($0 as? Note)?.text1 ?? "" })
        }
    }

    @Test func automaticMergesRollbackRefreshAndResetReachTheController() throws {
        let stack = try TestStack(.sqlite)
        let (context, controller, shadow) = controller(stack, sections: false)
        context.automaticallyMergesChangesFromParent = true
        let other = stack.container.newBackgroundContext()
        func check() throws {
            #expect(shadow.sections == [ResultsShadow.Section(name: "", objects: try context.fetch(controller.fetchRequest).map(ObjectIdentifier.init))])
            #expect(shadow.problems.isEmpty)
        }
        try context.performAndWait { () throws in
            _ = insert(1, "a", in: context)
            try context.save()
            try controller.performFetch()
            shadow.load(from: controller)
        }
        try other.performAndWait { () throws in
            _ = insert(2, "a", in: other)
            try other.save()
        }
        // The merge is queued on the context's queue: this block runs after it.
        try context.performAndWait { () throws in
            #expect(controller.fetchedObjects?.map(\.id) == [1, 2])
            try check()
            let added = insert(3, "a", in: context)
            context.processPendingChanges()
            #expect(controller.fetchedObjects?.map(\.id) == [1, 2, 3])
            _ = added
            context.rollback()
            #expect(controller.fetchedObjects?.map(\.id) == [1, 2])
            try check()
            let first = try #require(controller.fetchedObjects?.first)
            first.id = 7
            context.processPendingChanges()
            #expect(controller.fetchedObjects?.map(\.id) == [2, 7])
            context.refresh(first, mergeChanges: false)     // the change is dropped
            #expect(controller.fetchedObjects?.map(\.id) == [1, 2])
            try check()
            context.reset()
            #expect(controller.fetchedObjects?.map(\.id) == [1, 2])
            #expect(controller.fetchedObjects?.first !== first)   // the objects of after the reset
            try check()
        }
    }

    /// A merge is an event: the context's own edits not yet processed reach the controller with
    /// it (they stayed out of its results until the next event, while a fetch had them).
    @Test func aMergeAfterAnUnprocessedInsertReachesTheController() async throws {
        let stack = try TestStack(.sqlite)
        let (context, controller, _) = controller(stack, predicate: "id < 100", sections: false)
        context.automaticallyMergesChangesFromParent = true
        try context.performAndWait { () throws in
            _ = insert(1, "a", in: context)
            try context.save()
            try controller.performFetch()
            _ = insert(2, "a", in: context)        // not processed: no event has ended since
        }
        let other = stack.container.newBackgroundContext()
        try other.performAndWait { () throws in
            let request = Note.fetchRequest()
            request.predicate = NSPredicate(format: "id == 1")
            try #require(try other.fetch(request).first).id = 500
            try other.save()
        }
        let followed = await eventually { context.performAndWait { controller.fetchedObjects?.map(\.id) == [2] } }
        #expect(followed)
    }

    @Test func aSnapshotDelegateGetsSnapshotsOnly() throws {
        final class SnapshotDelegate: FetchedResultsControllerDelegate {
            var snapshots: [FetchedResultsSnapshot] = []
            var others = 0
            func controller(_ controller: AnyFetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot) {
                snapshots.append(snapshot)
            }
            func controllerWillChangeContent(_ controller: AnyFetchedResultsController) { others += 1 }
        }
        let stack = try TestStack(.sqlite)
        let (context, controller, _) = controller(stack)
        let delegate = SnapshotDelegate()
        controller.delegate = delegate
        try context.performAndWait { () throws in
            try controller.performFetch()
            let note = insert(1, "a", in: context)
            context.processPendingChanges()
            #expect(delegate.snapshots.last?.sectionIdentifiers == ["a"])
            #expect(delegate.snapshots.last?.itemIdentifiers == [note.objectID])
            try context.save()                               // the permanent ID replaces the temporary one
            #expect(delegate.snapshots.count == 2)
            #expect(delegate.snapshots.last?.itemIdentifiers == [note.objectID])
            #expect(note.objectID.isTemporaryID == false)
            note.text2 = "x"
            context.processPendingChanges()
            #expect(delegate.snapshots.last?.reloadedObjectIDs == [note.objectID])
            #expect(delegate.others == 0)
            #expect(controller.snapshot == FetchedResultsSnapshot(sections: [.init(name: "a", objectIDs: [note.objectID])], reloadedObjectIDs: []))
        }
    }

    @Test func aPredicateThroughARelationshipFollowsChangesOfTheRelatedObject() throws {
        let stack = try TestStack(.sqlite, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let work = Folder(context: context)
            work.title = "work"
            let home = Folder(context: context)
            home.title = "home"
            for (body, folder) in [("a", work), ("b", home), ("c", work)] {
                let memo = Memo(context: context)
                memo.body = body
                memo.folder = folder
            }
            try context.save()
            let request = Memo.fetchRequest()
            request.predicate = FetchPredicate(format: "folder.title == %@", "work")
            request.sortDescriptors = [NSSortDescriptor(key: "body", ascending: true)]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            let shadow = ResultsShadow()
            controller.delegate = shadow
            try controller.performFetch()
            shadow.load(from: controller)
            #expect(controller.fetchedObjects?.map(\.body) == ["a", "c"])
            home.title = "work"
            try context.save()                               // fetches see saved relationships
            #expect(controller.fetchedObjects?.map(\.body) == ["a", "b", "c"])
            #expect(shadow.sections.first?.objects.count == 3)
            #expect(shadow.problems.isEmpty)
        }
    }

    @Test func sectionsNamedByAFunctionOfTheObject() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (id, name) in [(1, "apple"), (2, "avocado"), (3, "banana")] as [(Int32, String)] { _ = insert(id, name, in: context) }
            try context.save()
            let request = Note.fetchRequest()
            request.sortDescriptors = [NSSortDescriptor(key: "text1", ascending: true)]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context) { note in
                String(note.text1?.prefix(1) ?? "")
            }
            try controller.performFetch()
            #expect(layout(controller) == ["a:1,2", "b:3"])
        }
    }
}
