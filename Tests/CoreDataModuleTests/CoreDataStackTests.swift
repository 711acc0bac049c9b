#if os(Linux)
import CoreData
import Foundation
import Testing
import TestSupport

/// A hand-written managed object class, as Core Data code writes one without code generation.
final class Task: NSManagedObject {
    var title: String {
        get { value(forKey: "title") as? String ?? "" }
        set { setValue(newValue, forKey: "title") }
    }
    var priority: Int64 {
        get { value(forKey: "priority") as? Int64 ?? 0 }
        set { setValue(newValue, forKey: "priority") }
    }
}

/// A file as it is written for Apple's Core Data — `import CoreData` and `import Foundation`, a
/// model built in code, a container, contexts, fetches, a batch delete merged by ID — compiled
/// and run unchanged on Linux through the `CoreData` module.
@Suite(.dedicatedThread) struct CoreDataStackTests {
    static func model() -> NSManagedObjectModel {
        let task = NSEntityDescription()
        task.name = "Task"
        task.managedObjectClassName = NSStringFromClass(Task.self)
        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        title.isOptional = false
        let priority = NSAttributeDescription()
        priority.name = "priority"
        priority.attributeType = .integer64AttributeType
        priority.defaultValue = 0
        task.properties = [title, priority]
        let model = NSManagedObjectModel()
        model.entities = [task]
        return model
    }

    @Test func aCoreDataStackRunsUnchanged() throws {
        let container = NSPersistentContainer(name: "Tasks", managedObjectModel: Self.model())
        container.persistentStoreDescriptions.first?.url = URL(fileURLWithPath: "/dev/null")
        container.loadPersistentStores { _, error in
            if let error { Issue.record(error, "the store did not load") }
        }
        container.viewContext.automaticallyMergesChangesFromParent = true

        let background = container.newBackgroundContext()
        try background.performAndWait {
            for (title, priority) in [("Write", 2), ("Test", 3), ("Ship", 1)] as [(String, Int64)] {
                let task = Task(context: background)
                task.title = title
                task.priority = priority
            }
            try background.save()
        }

        let request = NSFetchRequest<Task>(entityName: "Task")
        request.predicate = NSPredicate(format: "priority >= %d", 2)
        request.sortDescriptors = [NSSortDescriptor(key: "priority", ascending: false)]
        let context = container.viewContext
        let urgent = try context.performAndWait { try context.fetch(request).map(\.title) }
        #expect(urgent == ["Test", "Write"])

        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Task"))
        delete.resultType = .resultTypeObjectIDs
        let result = try background.performAndWait { try background.execute(delete) } as? NSBatchDeleteResult
        let deleted = result?.result as? [NSManagedObjectID] ?? []
        #expect(deleted.count == 3)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [context])
        #expect(try context.performAndWait { try context.count(for: NSFetchRequest<Task>(entityName: "Task")) } == 0)
    }

    @Test func errorsAreNSErrorsWithCoreDatasCodes() throws {
        let container = NSPersistentContainer(name: "Tasks", managedObjectModel: Self.model())
        container.persistentStoreDescriptions.first?.url = URL(fileURLWithPath: "/dev/null")
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let code = context.performAndWait { () -> Int in
            _ = NSEntityDescription.insertNewObject(forEntityName: "Task", into: context)   // no title
            do {
                try context.save()
                return 0
            } catch {
                return (error as NSError).code
            }
        }
        #expect(code == NSValidationMissingMandatoryPropertyError)
    }
}
#endif
