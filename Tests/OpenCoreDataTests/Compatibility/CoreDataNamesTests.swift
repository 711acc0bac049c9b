import OpenCoreData
import Testing
import TestSupport

/// Core Data code, spelled with Core Data's names, compiles and runs unchanged.
@Suite(.dedicatedThread) struct CoreDataNamesTests {
    @Test func coreDataSpellingsWork() throws {
        let directory = TemporaryDirectory()
        let model: NSManagedObjectModel = NSManagedObjectModel(Note.self)
        let container: NSPersistentContainer = NSPersistentContainer(name: "Names", managedObjectModel: model)
        let description: NSPersistentStoreDescription = NSPersistentStoreDescription(url: directory.file("Names.sqlite"))
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context: NSManagedObjectContext = container.newBackgroundContext()
        context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try context.performAndWait { () throws in
            let note = Note(context: context)
            note.id = 1
            try context.save()
            let id: NSManagedObjectID = note.objectID
            let request: NSFetchRequest<NSManagedObject> = NSFetchRequest<NSManagedObject>(entityName: "Note")
            let predicate: NSPredicate = NSPredicate(format: "id == %d", 1)
            let sort: NSSortDescriptor = NSSortDescriptor(key: "id", ascending: true)
            request.predicate = predicate
            request.sortDescriptors = [sort]
            #expect(try context.fetch(request).map(\.objectID) == [id])
            let entity: NSEntityDescription = note.entity
            let attribute: NSAttributeDescription? = entity.attributesByName["id"]
            #expect(attribute?.attributeType == NSAttributeType.integer32)
            #expect(context.persistentStoreCoordinator?.persistentStores.first?.type.rawValue == NSSQLiteStoreType)
        }
    }
}
