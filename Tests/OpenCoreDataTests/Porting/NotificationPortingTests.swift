import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Context notifications under Core Data's Swift names, and the one `reset()` posts.
@Suite(.dedicatedThread) struct NotificationPortingTests {
    @Test func swiftNamesAndKeysReadTheContextsNotifications() throws {
        let stack = try TestStack(.inMemory)
        let context = stack.container.newBackgroundContext()
        let saved = Recorder<Int>()
        let changed = Recorder<Int>()
        let didSave = NotificationCenter.default.addObserver(forName: NSManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) { note in
            saved.append((note.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjects.rawValue] as? Set<ManagedObject>)?.count ?? -1)
        }
        let didChange = NotificationCenter.default.addObserver(forName: NSManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil) { note in
            changed.append((note.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjects.rawValue] as? Set<ManagedObject>)?.count ?? -1)
        }
        defer { [didSave, didChange].forEach(NotificationCenter.default.removeObserver) }
        try context.performAndWait { () throws in
            _ = Note(context: context)
            _ = Note(context: context)
            try context.save()
        }
        #expect(saved.values == [2])
        #expect(changed.values == [2])
    }

    /// `reset()` tells observers that every object is gone (a list of objects made before it,
    /// kept by an observer, must be dropped), with the IDs of the objects the context held.
    @Test func resetPostsThatEveryObjectWasInvalidated() throws {
        let stack = try TestStack(.inMemory)
        let context = try stack.seededContext(ids: 0...2)
        let invalidated = Recorder<Set<ManagedObjectID>>()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { note in
            if let ids = note.userInfo?[NSManagedObjectContext.NotificationKey.invalidatedAllObjects.rawValue] as? [ManagedObjectID] { invalidated.append(Set(ids)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let held = try context.performAndWait { () throws in
            let notes = try context.fetch(Note.fetchRequest())
            context.reset()
            return Set(notes.map(\.objectID))
        }
        #expect(held.count == 3)
        #expect(invalidated.values == [held])
    }
}
