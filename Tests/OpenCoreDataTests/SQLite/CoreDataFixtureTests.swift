import OpenCoreData
import Testing
import TestSupport

/// Stores written by Apple's Core Data (in `Tests/Fixtures`), opened with models written in code.
@Suite(.dedicatedThread) struct CoreDataFixtureTests {
    /// DuckDuckGo's SyncMetadata model, version 3, as code.
    static func syncMetadataModel() -> ManagedObjectModel {
        let name = AttributeDescription(name: "name", type: .string, isOptional: false)
        name.isIndexed = true
        let feature = EntityDescription(name: "SyncFeatureEntity", properties: [
            AttributeDescription(name: "lastModified", type: .string),
            name,
            AttributeDescription(name: "state", type: .string),
        ])
        feature.uniquenessConstraints = [["name"]]
        let key = AttributeDescription(name: "key", type: .string, isOptional: false)
        key.isIndexed = true
        let settings = EntityDescription(name: "SyncableSettingsMetadata", properties: [
            key,
            AttributeDescription(name: "lastModified", type: .date),
        ])
        settings.uniquenessConstraints = [["key"]]
        return ManagedObjectModel(entities: [feature, settings])
    }

    @Test func versionHashesMatchTheOnesCoreDataComputed() throws {
        let hashes = Self.syncMetadataModel().entityVersionHashesByName
        #expect(hashes["SyncFeatureEntity"]?.hex == "289b89703a3216afe973a07e1889534d8650777e44ef899930569c6721eac357")
        #expect(hashes["SyncableSettingsMetadata"]?.hex == "d3b4d556db699538ab922ef424e5a35caa7ed626f29a1d8f03bf509c3d737c2d")
        let user = EntityDescription(name: "User", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "petName", type: .string),
        ])
        #expect(user.versionHash.hex == "6b31f4e97b691d16c4c820bae55f89408d47013bd42151ecfde1eac7fe4be798")
    }

    @Test func aRealCoreDataStoreOpensReadsSavesAndReopens() throws {
        let directory = TemporaryDirectory()
        let url = try Fixtures.copy("ddg-bsk/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite", into: directory)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        func open() throws -> PersistentContainer {
            let container = PersistentContainer(name: "SyncMetadata", managedObjectModel: Self.syncMetadataModel())
            container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
            try container.loadPersistentStores()
            return container
        }
        let container = try open()
        #expect(container.persistentStoreCoordinator.persistentStores[0].identifier == metadata[NSStoreUUIDKey] as? String)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws in
            let features = FetchRequest<ManagedObject>(entityName: "SyncFeatureEntity")
            features.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let rows = try context.fetch(features)
            #expect(rows.map { $0.value(forKey: "name") as? String } == ["TestFeature-01", "TestFeature-02"])
            #expect(rows.map { $0.value(forKey: "state") as? String } == ["needsRemoteDataFetch", "readyToSync"])
            let settings = FetchRequest<ManagedObject>(entityName: "SyncableSettingsMetadata")
            settings.predicate = NSPredicate(format: "lastModified != nil")
            let setting = try #require(try context.fetch(settings).first)
            #expect(setting.value(forKey: "key") as? String == "TestSetting-02")
            #expect((setting.value(forKey: "lastModified") as? Date)?.timeIntervalSinceReferenceDate == 733068222.001259)
            rows[0].setValue("readyToSync", forKey: "state")
            let added = ManagedObject(entity: try #require(container.managedObjectModel.entitiesByName["SyncFeatureEntity"]), insertInto: context)
            added.setValue("TestFeature-03", forKey: "name")
            try context.save()
            #expect(added.objectID.uriRepresentation().lastPathComponent == "p3")
        }
        let coordinator = container.persistentStoreCoordinator
        try coordinator.remove(coordinator.persistentStores[0])

        let reopened = try open()
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            let request = FetchRequest<ManagedObject>(entityName: "SyncFeatureEntity")
            request.predicate = NSPredicate(format: "state == %@", "readyToSync")
            #expect(try check.count(for: request) == 2)
        }
        let db = try RawSQLite(url)
        #expect(try db.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'SyncFeatureEntity'").first?.first as? Int64 == 3)
        #expect(try db.rows("SELECT Z_OPT FROM ZSYNCFEATUREENTITY WHERE ZNAME = 'TestFeature-01'").first?.first as? Int64 == 2)
    }

    @Test func aNewStoreForTheSameModelHasCoreDatasSchema() throws {
        let directory = TemporaryDirectory()
        let fixture = try RawSQLite(try Fixtures.copy("ddg-bsk/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite", into: directory))
        let container = PersistentContainer(name: "Fresh", managedObjectModel: Self.syncMetadataModel())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.file("Fresh.sqlite"))]
        try container.loadPersistentStores()
        let ours = try RawSQLite(directory.file("Fresh.sqlite"))
        for name in ["ZSYNCFEATUREENTITY", "ZSYNCABLESETTINGSMETADATA", "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE",
                     "Z_SyncFeatureEntity_UNIQUE_name", "Z_SyncableSettingsMetadata_UNIQUE_key", "Z_SyncFeatureEntity_name", "Z_SyncableSettingsMetadata_key"] {
            let expected = try fixture.schema(name)
            #expect(expected != nil, "\(name) missing from the fixture")
            #expect(try ours.schema(name) == expected, "\(name)")
        }
        #expect(try ours.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { "\($0[0] ?? "")\($0[1] ?? "")\($0[2] ?? "")" }
                == fixture.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { "\($0[0] ?? "")\($0[1] ?? "")\($0[2] ?? "")" })
    }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
