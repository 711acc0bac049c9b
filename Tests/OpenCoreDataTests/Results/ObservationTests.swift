import Foundation
import Observation
import OpenCoreData
import Testing
import TestSupport

/// `withObservationTracking` around reads of `@Managed` properties: which changes fire it.
@Suite(.dedicatedThread) struct ObservationTests {
    /// Counts the times an observation fired (`onChange` runs on the thread that made the change).
    final class Fired: Sendable {
        private let count = Recorder<Int>()
        var times: Int { count.values.count }
        func fire() { count.append(1) }
    }

    /// Tracks `read` once; the returned counter says whether (and how often) it fired since.
    private func track(_ read: () -> Void) -> Fired {
        let fired = Fired()
        withObservationTracking { read() } onChange: { fired.fire() }
        return fired
    }

    private func observableContext(_ stack: TestStack) -> ManagedObjectContext {
        let context = stack.container.newBackgroundContext()
        context.performAndWait { context.makesObjectsObservable = true }
        return context
    }

    @Test(arguments: StoreKind.allCases)
    func aLocalEditFiresForThePropertyReadAndNoOther(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = observableContext(stack)
        try context.performAndWait { () throws in
            let note = Note(context: context), other = Note(context: context)
            note.id = 1; other.id = 2
            try context.save()
            let title = track { _ = note.text1 }
            let id = track { _ = note.id }
            other.text1 = "another object"
            note.text2 = "another property"
            #expect(title.times == 0 && id.times == 0)
            note.text1 = "changed"
            #expect(title.times == 1)
            #expect(id.times == 0)
            note.text1 = "changed"                      // the same value again is no change
            #expect(title.times == 1)
            #expect(note.text1 == "changed")
        }
    }

    @Test func relationshipsFireOnBothEnds() throws {
        let stack = try TestStack(.sqlite, model: ManagedObjectModel(Drawer.self, Folder.self, Memo.self, Tag.self))
        let context = observableContext(stack)
        try context.performAndWait { () throws in
            let folder = Folder(context: context), memo = Memo(context: context), other = Folder(context: context)
            try context.save()
            let members = track { _ = folder.memos }
            let owner = track { _ = memo.folder }
            memo.folder = folder                        // sets the to-one; the to-many follows
            #expect(members.times == 1)
            #expect(owner.times == 1)
            let newOwner = track { _ = memo.folder }
            let otherMembers = track { _ = other.memos }
            other.memos.insert(memo)                    // sets the to-many; the to-one follows
            #expect(newOwner.times == 1)
            #expect(otherMembers.times == 1)
            #expect(memo.folder === other)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMergedSaveFromAnotherContextFires(kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = observableContext(stack)
        let writer = stack.container.newBackgroundContext()
        let id = try writer.performAndWait { () throws in
            let note = Note(context: writer)
            note.text1 = "first"
            try writer.save()
            return note.objectID
        }
        let (note, fired) = try context.performAndWait { () throws in
            let note = try #require(try context.existingObject(with: id) as? Note)
            #expect(note.text1 == "first")
            return (note, track { _ = note.text1 })
        }
        let saves = NotificationRecorder()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { saves.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try writer.performAndWait { () throws in
            (try #require(try writer.existingObject(with: id) as? Note)).text1 = "second"
            try writer.save()
        }
        let saved = try #require(saves.values.first)
        #expect(fired.times == 0)
        context.performAndWait {
            context.mergeChanges(fromContextDidSave: saved)
            #expect(fired.times == 1)
            #expect(note.text1 == "second")
        }
    }

    @Test func undoRollbackAndRefreshFire() throws {
        let stack = try TestStack(.sqlite)
        let context = observableContext(stack)
        try context.performAndWait { () throws in
            context.undoManager = UndoManager()
            let note = Note(context: context)
            note.text1 = "saved"
            try context.save()
            note.text1 = "edited"
            context.processPendingChanges()
            let undo = track { _ = note.text1 }
            context.undo()
            #expect(undo.times == 1)
            #expect(note.text1 == "saved")
            note.text1 = "edited again"
            let rollback = track { _ = note.text1 }
            context.rollback()
            #expect(rollback.times == 1)
            #expect(note.text1 == "saved")
            let refresh = track { _ = note.text1 }
            context.refresh(note, mergeChanges: false)
            #expect(refresh.times == 1)
            #expect(note.text1 == "saved")
        }
    }

    @Test func privateQueueContextsAreNotObservableUnlessAsked() throws {
        let stack = try TestStack(.sqlite)
        #expect(stack.container.viewContext.makesObjectsObservable)
        let context = stack.container.newBackgroundContext()
        context.performAndWait {
            #expect(!context.makesObjectsObservable)
            let note = Note(context: context)
            let fired = track { _ = note.text1 }
            note.text1 = "unobserved"
            #expect(fired.times == 0)
            context.makesObjectsObservable = true
            let observed = track { _ = note.text1 }
            note.text1 = "observed"
            #expect(observed.times == 1)
        }
    }
}
