import Synchronization
import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Staged migration (`NSStagedMigrationManager`): custom stages with app code before and after
/// a lightweight step, lightweight stages through several versions.
@Suite(.dedicatedThread) struct StagedMigrationTests {
    /// What the handlers saw, in order.
    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// v1: a name and an optional nickname. v2: adds first and last names. v3: drops the name.
    private static func person(_ attributes: [AttributeDescription]) -> ManagedObjectModel {
        ManagedObjectModel(entities: [EntityDescription(name: "Person", properties: attributes)])
    }
    private static func v1() -> ManagedObjectModel {
        person([AttributeDescription(name: "name", type: .string), AttributeDescription(name: "nickname", type: .string)])
    }
    private static func v2() -> ManagedObjectModel {
        person([AttributeDescription(name: "name", type: .string), AttributeDescription(name: "nickname", type: .string),
                AttributeDescription(name: "firstName", type: .string), AttributeDescription(name: "lastName", type: .string)])
    }
    private static func v3() -> ManagedObjectModel {
        person([AttributeDescription(name: "nickname", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "firstName", type: .string), AttributeDescription(name: "lastName", type: .string)])
    }

    /// A v1 store with three people, one without a nickname.
    private func v1Store(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("People.sqlite")
        let container = try PersistentContainer.loaded(at: url, model: Self.v1())
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            for (name, nickname) in [("Ada Lovelace", "ada"), ("Alan Turing", nil), ("Grace Hopper", "amazing grace")] {
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(name, forKey: "name")
                person.setValue(nickname, forKey: "nickname")
            }
            try context.save()
        }
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        return url
    }

    private func storeChecksum(_ url: URL) throws -> String? {
        try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)["NSStoreModelVersionChecksumKey"] as? String
    }

    /// The stages of the app: v1 → v2 with code around it, then v2 → v3 lightweight.
    private func stages(_ v1: ManagedObjectModel, _ v2: ManagedObjectModel, _ v3: ManagedObjectModel, log: Log,
                        failing: Bool = false) -> StagedMigrationManager {
        let custom = NSCustomMigrationStage(migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
                                            to: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        custom.label = "split names"
        custom.willMigrateHandler = { manager, _ in
            // Before the step, on v1: every person gets a nickname (v3 requires one).
            let container = try #require(manager.container)
            log.append("will: \(container.managedObjectModel.entitiesByName["Person"]?.attributesByName.keys.sorted() ?? [])")
            if failing { throw CocoaError(.featureUnsupported) }
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "nickname == nil")
                for person in try context.fetch(request) { person.setValue("none", forKey: "nickname") }
                try context.save()
            }
        }
        custom.didMigrateHandler = { manager, _ in
            // After the step, on v2: the name is split into the new attributes.
            let container = try #require(manager.container)
            log.append("did: \(container.managedObjectModel.entitiesByName["Person"]?.attributesByName.keys.sorted() ?? [])")
            let context = container.newBackgroundContext()
            try context.performAndWait { () throws in
                for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
                    let parts = (person.value(forKey: "name") as? String ?? "").split(separator: " ", maxSplits: 1).map(String.init)
                    person.setValue(parts.first, forKey: "firstName")
                    person.setValue(parts.count > 1 ? parts[1] : nil, forKey: "lastName")
                }
                try context.save()
            }
        }
        return NSStagedMigrationManager([custom, NSLightweightMigrationStage([v2.versionChecksum, v3.versionChecksum])])
    }

    private func load(_ url: URL, model: ManagedObjectModel, manager: StagedMigrationManager) throws -> PersistentContainer {
        try PersistentContainer.loaded(at: url, model: model) { description in
            description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        }
    }

    @Test func aCustomStageRunsAppCodeAroundItsStepAndLightweightStagesFollow() throws {
        let directory = TemporaryDirectory()
        let url = try v1Store(in: directory)
        let (v1, v2, v3) = (Self.v1(), Self.v2(), Self.v3())
        let log = Log()
        let container = try load(url, model: v3, manager: stages(v1, v2, v3, log: log))
        #expect(log.all == ["will: [\"name\", \"nickname\"]", "did: [\"firstName\", \"lastName\", \"name\", \"nickname\"]"])
        #expect(try storeChecksum(url) == v3.versionChecksum)
        let context = container.newBackgroundContext()
        let people = try context.performAndWait { () throws in
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map {
                [$0.value(forKey: "firstName") as? String, $0.value(forKey: "lastName") as? String, $0.value(forKey: "nickname") as? String]
            }
        }
        #expect(Set(people) == [["Ada", "Lovelace", "ada"], ["Alan", "Turing", "none"], ["Grace", "Hopper", "amazing grace"]])
        // Loading again: the store is at v3, no stage runs.
        try container.persistentStoreCoordinator.remove(container.persistentStoreCoordinator.persistentStores[0])
        _ = try load(url, model: v3, manager: stages(v1, v2, v3, log: log))
        #expect(log.all.count == 2)
    }

    @Test func aFailingHandlerLeavesTheStoreAtTheVersionReached() throws {
        let directory = TemporaryDirectory()
        let url = try v1Store(in: directory)
        let (v1, v2, v3) = (Self.v1(), Self.v2(), Self.v3())
        let log = Log()
        let error = #expect(throws: CoreDataError.self) { _ = try load(url, model: v3, manager: stages(v1, v2, v3, log: log, failing: true)) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("willMigrateHandler of the migration stage 'split names'") == true)
        #expect(try storeChecksum(url) == v1.versionChecksum)
        // Fixed, it goes through.
        _ = try load(url, model: v3, manager: stages(v1, v2, v3, log: log))
        #expect(try storeChecksum(url) == v3.versionChecksum)
    }

    @Test func aStageNamingAModelNobodyHasIsReported() throws {
        let directory = TemporaryDirectory()
        let url = try v1Store(in: directory)
        let (v1, v3) = (Self.v1(), Self.v3())
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, "bm90IGEgbW9kZWw=", v3.versionChecksum])])
        let error = #expect(throws: CoreDataError.self) { _ = try load(url, model: v3, manager: manager) }
        #expect(error?.code == .migrationMissingSourceModel)
        #expect(error?.message.contains("bm90IGEgbW9kZWw=") == true)
        #expect(try storeChecksum(url) == v1.versionChecksum)
    }

    @Test func aReferenceWithTheWrongChecksumIsRefused() throws {
        let reference = NSManagedObjectModelReference(model: Self.v1(), versionChecksum: Self.v2().versionChecksum)
        #expect(throws: CoreDataError.self) { try reference.resolvedModel() }
    }
}
