import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Core Data code, kept in Core Data's spellings, compiles and behaves as it does there: the
/// stacks of the well-known concurrency articles, hand-written managed classes, lifecycle hooks.
@Suite(.dedicatedThread) struct CoreDataPortingTests {
    /// A model file loaded Core Data's way, with the region's class named by hand (its file
    /// names it `.PortRegion`, "the app's module", which a test bundle is not).
    private func loadModel(_ directory: TemporaryDirectory) throws -> NSManagedObjectModel {
        let url = try PortingModel.write(named: "PortQuakes", into: directory.url)
        let model = try #require(NSManagedObjectModel(contentsOf: url))
        try #require(model.entitiesByName["Region"]).managedObjectClass = PortRegion.self
        return model
    }

    /// A coordinator on an SQLite file, opened as Cocoacasts' `CoreDataManager` opens it.
    private func coordinator(_ directory: TemporaryDirectory, model: NSManagedObjectModel) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Quakes.sqlite"), options: options)
        return coordinator
    }

    private func backgroundContext(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func aCoreDataStackPortsWithCoreDatasOwnSpellings() throws {
        let directory = TemporaryDirectory()
        #expect(NSManagedObjectModel(contentsOf: directory.file("Missing.momd")) == nil)
        let model = try loadModel(directory)
        // The class named module-qualified in the file is found by name.
        #expect(model.entitiesByName["Quake"]?.managedObjectClass == PortQuake.self)
        let coordinator = try coordinator(directory, model: model)
        #expect(coordinator.persistentStores.first?.type.rawValue == NSSQLiteStoreType)
        // The class's entity in the models in use (tests running beside this one use models of
        // their own with the same class: any of them may answer).
        let classEntity = PortQuake.entity()
        #expect(classEntity.name == "Quake" && classEntity.managedObjectClass == PortQuake.self)

        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        #expect(main.concurrencyType == .mainQueue)
        main.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        #expect(main.mergePolicy.mergeType == .mergeByPropertyObjectTrump)
        #expect([NSErrorMergePolicy, NSMergeByPropertyStoreTrumpMergePolicy, NSOverwriteMergePolicy, NSRollbackMergePolicy].map(\.mergeType)
                == [.error, .mergeByPropertyStoreTrump, .overwrite, .rollback])

        let context = backgroundContext(coordinator)
        context.userInfo["importer"] = "USGS"
        #expect(context.userInfo["importer"] as? String == "USGS")
        try context.performAndWait {
            let entity = try #require(NSEntityDescription.entity(forEntityName: "Quake", in: context))
            let first = NSManagedObject(entity: entity, insertInto: context)
            first.setValue("ci1", forKey: "code")
            let second = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context)
            second.setValue("ci2", forKey: "code")
            #expect(NSEntityDescription.entity(forEntityName: "Nope", in: context) == nil)
            try context.save()

            // Untyped requests, as Core Data code writes them.
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Quake")
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            let objects = try #require(try context.fetch(request) as? [NSManagedObject])
            #expect(objects.map { $0.value(forKey: "code") as? String } == ["ci1", "ci2"])
            #expect(try context.count(for: request) == 2)
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["code"]
            let rows = try #require(try context.fetch(request) as? [NSDictionary])
            #expect(rows.compactMap { $0["code"] as? String } == ["ci1", "ci2"])
            request.resultType = .managedObjectIDResultType
            #expect((try context.fetch(request) as? [NSManagedObjectID])?.count == 2)
        }

        // Apple's Earthquakes sample: a batch delete through the coordinator, merged by ID.
        let view = backgroundContext(coordinator)
        let held = try view.performAndWait { try view.fetch(PortQuake.fetchRequest()) }
        #expect(held.count == 2)
        let batchDelete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Quake"))
        batchDelete.resultType = .resultTypeObjectIDs
        let result = try #require(try coordinator.execute(batchDelete, with: context) as? NSBatchDeleteResult)
        let deleted = try #require(result.result as? [NSManagedObjectID])
        #expect(deleted.count == 2)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [view])
        try view.performAndWait { () throws in
            #expect(try view.count(for: PortQuake.fetchRequest()) == 0)
            let stillThere = held.filter { !$0.isDeleted }
            #expect(stillThere.isEmpty)
        }
        #expect(throws: CoreDataError.self) { _ = try coordinator.execute("not a request", with: context) }
    }

    @Test func aStoreDescriptionTypeIsCoreDatasString() throws {
        let directory = TemporaryDirectory()
        let container = NSPersistentContainer(name: "PortQuakes", managedObjectModel: try loadModel(directory))
        let description = try #require(container.persistentStoreDescriptions.first)
        #expect(description.type == NSSQLiteStoreType)
        description.type = NSInMemoryStoreType
        #expect(description.storeType == .inMemory)
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        try container.loadPersistentStores()
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == .inMemory)
    }

    @Test func aContainerFindsItsModelByNameBesideTheExecutable() throws {
        let executableFolder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let name = "PortQuakes\(UUID().uuidString.prefix(8))"
        let written = try PortingModel.write(named: name, into: executableFolder)
        defer { try? FileManager.default.removeItem(at: written) }
        let directory = TemporaryDirectory()
        let container = NSPersistentContainer(name: name)
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Quake", "Region"])
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.file("Found.sqlite"))]
        try container.loadPersistentStores()
        // Not found: the error says where it looked.
        let error = try #require(throws: CoreDataError.self) { _ = try ManagedObjectModel(named: "NoSuchModel\(name)") }
        #expect(error.message.contains(executableFolder.path))
    }

    @Test func lifecycleHooksRunWhenCoreDatasDo() throws {
        let directory = TemporaryDirectory()
        let coordinator = try coordinator(directory, model: try loadModel(directory))
        let context = backgroundContext(coordinator)
        context.undoManager = ContextUndoManager()
        let (quakeID, regionID): (NSManagedObjectID, NSManagedObjectID) = try context.performAndWait {
            let region = NSEntityDescription.insertNewObject(forEntityName: "Region", into: context) as! PortRegion
            region.name = "Alaska"
            let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context) as! PortQuake
            // awakeFromInsert ran once; its primitive value is part of the insert.
            #expect(quake.hooks == ["awakeFromInsert"])
            #expect(quake.time == Date(timeIntervalSince1970: 1_000))
            quake.code = "ak1"
            quake.region = region
            context.processPendingChanges()
            context.undo()                       // takes the insert back…
            context.redo()                       // …and brings it back, without a second awake
            #expect(quake.hooks == ["awakeFromInsert"])
            #expect(quake.managedObjectContext === context)
            // willSave may change values: they are saved with the rest.
            quake.willSaveSetsPlace = "Anchorage"
            try context.save()
            #expect(quake.hooks == ["awakeFromInsert", "willSave", "willSave", "didSave"])
            #expect(!context.hasChanges)
            return (quake.objectID, region.objectID)
        }

        // Another context: awakeFromFetch, whose setter is no change.
        let reader = backgroundContext(coordinator)
        try reader.performAndWait {
            let quake = try #require(try reader.existingObject(with: quakeID) as? PortQuake)
            #expect(quake.hooks == ["awakeFromFetch"])
            #expect(quake.place == "Anchorage")
            #expect(quake.time == Date(timeIntervalSince1970: 1_000))
            #expect(!quake.hasChanges && !reader.hasChanges)
            // A refresh without merging turns it into a fault between the two hooks.
            reader.refresh(quake, mergeChanges: false)
            #expect(quake.hooks == ["awakeFromFetch", "willTurnIntoFault(loaded)", "didTurnIntoFault(fault)"])
            _ = quake.code                       // fires the fault: awakes from the fetch again
            #expect(quake.hooks.last == "awakeFromFetch")
        }

        // Deleting the region: prepareForDeletion runs at the end of the event, before the
        // cascade, while its relationships are still there; willSave/didSave see the deletion.
        let deleter = backgroundContext(coordinator)
        try deleter.performAndWait {
            let region = try #require(try deleter.existingObject(with: regionID) as? PortRegion)
            let quake = try #require(try deleter.existingObject(with: quakeID) as? PortQuake)
            deleter.delete(region)
            #expect(region.hooks.isEmpty)
            deleter.processPendingChanges()
            #expect(region.hooks == ["prepareForDeletion(quakes: 1)"])
            #expect(quake.isDeleted)
            #expect(quake.hooks == ["awakeFromFetch", "prepareForDeletion(region: Alaska)"])
            try deleter.save()
            #expect(quake.hooks.suffix(2) == ["willSave(deleted)", "didSave(deleted)"])
            #expect(region.hooks == ["prepareForDeletion(quakes: 1)"])
        }
    }

    @Test func aWillSaveThatChangesSomethingEveryTimeFailsTheSaveInsteadOfLooping() throws {
        let directory = TemporaryDirectory()
        let context = backgroundContext(try coordinator(directory, model: try loadModel(directory)))
        try context.performAndWait {
            let region = NSEntityDescription.insertNewObject(forEntityName: "Region", into: context) as! PortRegion
            region.restlessWillSave = true
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .persistentStoreSave)
            #expect(error.message.contains("Region"))
            region.restlessWillSave = false
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Region")) == 1)
        }
    }

    @Test func primitiveAccessorsChangeNothingUntilDidChangeValue() throws {
        let directory = TemporaryDirectory()
        let coordinator = try coordinator(directory, model: try loadModel(directory))
        let context = backgroundContext(coordinator)
        context.undoManager = ContextUndoManager()
        try context.performAndWait {
            let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context) as! PortQuake
            quake.code = "nc1"
            try context.save()

            // A primitive set alone: not a change, not saved.
            quake.setPrimitiveValue(Float(9), forKey: "magnitude")
            #expect(quake.magnitude == 9)
            #expect(!quake.hasChanges && !quake.hasPersistentChangedValues)
            context.refresh(quake, mergeChanges: false)
            #expect(quake.magnitude == 0)

            // The custom accessor (will/setPrimitive/did) is a change: saved and undoable.
            quake.magnitude = 4.5
            #expect(quake.isUpdated && quake.hasPersistentChangedValues)
            #expect(quake.changedValues()["magnitude"] as? Float == 4.5)
            context.processPendingChanges()
            context.undo()
            #expect(quake.magnitude == 0 && !quake.hasChanges)
            context.redo()
            #expect(quake.magnitude == 4.5)
            try context.save()
            // Set back to the saved value: changed, but no persistent value differs.
            quake.magnitude = 3
            quake.magnitude = 4.5
            #expect(quake.hasChanges && !quake.hasPersistentChangedValues)
        }
        let reader = backgroundContext(coordinator)
        let count = try reader.performAndWait {
            let request = PortQuake.fetchRequest()
            request.predicate = NSPredicate(format: "magnitude == 4.5")
            return try reader.count(for: request)
        }
        #expect(count == 1)
    }

    @Test func mutableSetsAndObjectIDsChangeAndReadRelationships() throws {
        let directory = TemporaryDirectory()
        let coordinator = try coordinator(directory, model: try loadModel(directory))
        let context = backgroundContext(coordinator)
        let regionID: NSManagedObjectID = try context.performAndWait {
            let region = NSEntityDescription.insertNewObject(forEntityName: "Region", into: context) as! PortRegion
            let quakes = (0..<3).map { index -> PortQuake in
                let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context) as! PortQuake
                quake.code = "q\(index)"
                return quake
            }
            let members = region.mutableSetValue(forKey: "quakes")
            members.add(quakes[0])
            members.addObjects(from: [quakes[1], quakes[2]])
            members.remove(quakes[1])
            #expect(members.count == 2 && members.contains(quakes[0]) && !members.contains(quakes[1]))
            #expect(quakes[0].region === region && quakes[1].region == nil)     // inverses follow

            let pinned = region.mutableOrderedSetValue(forKey: "pinned")
            pinned.add(quakes[2])
            pinned.insert(quakes[0], at: 0)
            pinned.add(quakes[1])
            pinned.moveObjects(at: IndexSet(integer: 2), to: 0)
            #expect(region.pinned.map(\.code) == ["q1", "q0", "q2"])
            pinned.removeObject(at: 1)
            #expect(pinned.array.compactMap { ($0 as? PortQuake)?.code } == ["q1", "q2"])
            #expect(pinned.index(of: quakes[0]) == NSNotFound)
            try context.save()
            return region.objectID
        }
        let reader = backgroundContext(coordinator)
        reader.performAndWait {
            let region = reader.object(with: regionID)
            let ids = region.objectIDs(forRelationshipNamed: "quakes")
            #expect(ids.count == 2)
            // The IDs came without registering the quakes as objects.
            #expect(ids.allSatisfy { reader.registeredObject(for: $0) == nil })
            #expect(region.objectIDs(forRelationshipNamed: "pinned").count == 2)
            let quake = reader.object(with: ids[0])
            #expect(quake.objectIDs(forRelationshipNamed: "region") == [regionID])
        }
    }

    @Test func propagatesDeletesAtEndOfEventFalseWaitsForTheSave() throws {
        let directory = TemporaryDirectory()
        let context = backgroundContext(try coordinator(directory, model: try loadModel(directory)))
        try context.performAndWait {
            #expect(context.propagatesDeletesAtEndOfEvent)
            let region = NSEntityDescription.insertNewObject(forEntityName: "Region", into: context) as! PortRegion
            let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context) as! PortQuake
            quake.region = region
            try context.save()

            context.propagatesDeletesAtEndOfEvent = false
            context.delete(region)
            context.processPendingChanges()
            #expect(!quake.isDeleted && region.hooks.isEmpty)       // the cascade waits
            try context.save()
            #expect(region.hooks == ["prepareForDeletion(quakes: 1)"])
            #expect(try context.count(for: PortQuake.fetchRequest()) == 0)
        }
    }

    @Test func retainsRegisteredObjectsKeepsObjectsNobodyHolds() throws {
        let directory = TemporaryDirectory()
        let context = backgroundContext(try coordinator(directory, model: try loadModel(directory)))
        try context.performAndWait {
            for index in 0..<3 { NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context).setValue("r\(index)", forKey: "code") }
            try context.save()
            context.reset()
            _ = try context.fetch(PortQuake.fetchRequest())            // results dropped at once
            #expect(context.registeredObjects.isEmpty)
            context.retainsRegisteredObjects = true
            _ = try context.fetch(PortQuake.fetchRequest())
            #expect(context.registeredObjects.count == 3)
        }
    }

    @Test func anAsynchronousFetchDeliversOnTheContextsQueueOrIsCancelled() throws {
        let directory = TemporaryDirectory()
        let context = backgroundContext(try coordinator(directory, model: try loadModel(directory)))
        let delivered = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let (finished, cancelled) = try context.performAndWait { () throws in
            for index in 0..<5 { NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context).setValue("a\(index)", forKey: "code") }
            try context.save()
            let request = NSAsynchronousFetchRequest(fetchRequest: PortQuake.fetchRequest()) { result in
                delivered.append("\(result.finalResult?.count ?? -1) on its queue: \(result.finalResult?.allSatisfy { $0.managedObjectContext === context } ?? false)")
                done.signal()
            }
            let finished = try #require(try context.execute(request) as? NSAsynchronousFetchResult<PortQuake>)
            #expect(finished.finalResult == nil)                 // runs after this block
            let skipped = NSAsynchronousFetchRequest(fetchRequest: PortQuake.fetchRequest()) { result in
                delivered.append("cancelled: \((result.operationError as? CocoaError)?.code == .userCancelled), \(result.finalResult == nil)")
                done.signal()
            }
            let cancelled = try #require(try context.execute(skipped) as? NSAsynchronousFetchResult<PortQuake>)
            cancelled.cancel()
            return (UncheckedBox(finished), UncheckedBox(cancelled))
        }
        done.waitOrRecord()
        done.waitOrRecord()
        #expect(delivered.values == ["5 on its queue: true", "cancelled: true, true"])
        context.performAndWait {
            #expect(finished.value.finalResult?.count == 5 && finished.value.progress?.completedUnitCount == 5)
            #expect(cancelled.value.progress?.isCancelled == true)
        }
    }

    @Test func willSaveAndDidMergeNotificationsArePosted() throws {
        let directory = TemporaryDirectory()
        let coordinator = try coordinator(directory, model: try loadModel(directory))
        let writer = backgroundContext(coordinator)
        let reader = backgroundContext(coordinator)
        let events = Recorder<String>()
        let observers = [
            NotificationCenter.default.addObserver(forName: .NSManagedObjectContextWillSave, object: writer, queue: nil) { _ in events.append("willSave") },
            NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { _ in events.append("didSave") },
            NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidMergeChangesObjectIDs, object: reader, queue: nil) { note in
                events.append("didMerge \((note.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>)?.count ?? -1)")
            },
        ]
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let saved = NotificationRecorder()
        let saveObserver = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: writer, queue: nil) { saved.append($0) }
        defer { NotificationCenter.default.removeObserver(saveObserver) }
        try writer.performAndWait {
            try writer.save()                                       // nothing to save: no notifications
            NSEntityDescription.insertNewObject(forEntityName: "Quake", into: writer).setValue("n1", forKey: "code")
            try writer.save()
        }
        let note = try #require(saved.values.first)
        reader.performAndWait { reader.mergeChanges(fromContextDidSave: note) }
        #expect(events.values == ["willSave", "didSave", "didMerge 1"])
    }

    @Test func delegatesWrittenInCoreDatasSpellingAreCalled() throws {
        let directory = TemporaryDirectory()
        let coordinator = try coordinator(directory, model: try loadModel(directory))
        let context = backgroundContext(coordinator)
        try context.performAndWait { () throws in
            // A typed controller, and an untyped one as older Core Data code writes it.
            let typedRequest = PortQuake.fetchRequest()
            typedRequest.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            let typed = NSFetchedResultsController(fetchRequest: typedRequest, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            let untypedRequest = NSFetchRequest<NSFetchRequestResult>(entityName: "Quake")
            untypedRequest.sortDescriptors = [NSSortDescriptor(key: "code", ascending: false)]
            let untyped = NSFetchedResultsController<NSFetchRequestResult>(fetchRequest: untypedRequest, managedObjectContext: context,
                                                                          sectionNameKeyPath: nil, cacheName: nil)
            let delegate = CoreDataSpelledDelegate()
            typed.delegate = delegate
            untyped.delegate = delegate
            try typed.performFetch()
            try untyped.performFetch()
            for code in ["a", "b"] { NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context).setValue(code, forKey: "code") }
            context.processPendingChanges()
            // Both controllers told, through the methods spelled as in Core Data; the typed one
            // through a view whose results are its own.
            #expect(delegate.events.filter { $0.hasPrefix("typed") } == ["typed will", "typed insert 0", "typed insert 1", "typed did a,b"])
            #expect(delegate.events.filter { $0.hasPrefix("untyped") } == ["untyped will", "untyped insert 0", "untyped insert 1", "untyped did b,a"])
            #expect(delegate.shown.contains { $0 === typed } && delegate.shown.contains { $0 === untyped })
            #expect(untyped.fetchedObjects?.compactMap { ($0 as? PortQuake)?.code } == ["b", "a"])
            #expect((untyped.object(at: IndexPath(item: 0, section: 0)) as? PortQuake)?.code == "b")
        }
    }
}

/// A delegate exactly as Core Data code writes one: every method takes
/// `NSFetchedResultsController<NSFetchRequestResult>`.
final class CoreDataSpelledDelegate: NSObject, NSFetchedResultsControllerDelegate {
    var events: [String] = []
    var shown: [AnyFetchedResultsController] = []

    private func name(_ controller: NSFetchedResultsController<NSFetchRequestResult>) -> String {
        controller.shownController === controller ? "untyped" : "typed"
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("\(name(controller)) will")
        shown.append(controller.shownController)
    }

    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
        if type == .insert, let newIndexPath { events.append("\(name(controller)) insert \(newIndexPath.item)") }
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        let codes = (controller.fetchedObjects ?? []).compactMap { ($0 as? NSManagedObject)?.value(forKey: "code") as? String }
        events.append("\(name(controller)) did \(codes.joined(separator: ","))")
    }
}
