import OpenCoreData
import Testing
import TestSupport

/// Models written by Xcode (`.xcdatamodeld`), loaded and checked against the version hashes
/// Apple's Core Data wrote into the stores made with them.
@Suite(.dedicatedThread) struct ModelFileTests {
    static let pairs: [(model: String, version: String, store: String)] = [
        ("bnr-coredatastack/Sample Model/Deprecated/Sample.xcdatamodeld", "TestModel", "bnr-coredatastack/Sample Model/Deprecated/TestModel.sqlite"),
        ("objcio-moody/Migrations/Migrations/Moody.xcdatamodeld", "Moody", "objcio-moody/Migrations/MigrationsTests/Moody.moody"),
        ("ddg-bsk/Sources/Bookmarks/BookmarksModel.xcdatamodeld", "BookmarksModel", "ddg-bsk/Tests/BookmarksTests/Resources/Bookmarks_V1.sqlite"),
        ("ddg-bsk/Sources/DDGSync/SyncMetadata.xcdatamodeld", "SyncMetadata 3", "ddg-bsk/Tests/DDGSyncTests/Resources/SyncMetadata_V3.sqlite"),
        ("coredataplus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld", "SampleModel3", "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"),
    ]

    @Test(arguments: pairs.indices)
    func xcodeModelsHaveTheHashesCoreDataWrote(index: Int) throws {
        let pair = Self.pairs[index]
        let directory = TemporaryDirectory()
        let store = try Fixtures.copy(pair.store, into: directory)
        let model = try ManagedObjectModel(contentsOf: Fixtures.url(pair.model), version: pair.version)
        let stored = try #require(try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: store)["NSStoreModelVersionHashes"] as? [String: Data])
        let computed = model.entityVersionHashesByName
        #expect(Set(computed.keys) == Set(stored.keys), "\(pair.model)")
        for (name, hash) in stored { #expect(computed[name] == hash, "\(pair.model): \(name)") }
        // And the store opens with it.
        let container = PersistentContainer(name: "Fixture", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: store)]
        try container.loadPersistentStores()
    }

    @Test func theCurrentVersionIsChosen() throws {
        let bundle = Fixtures.url("coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld")
        let current = try ManagedObjectModel(contentsOf: bundle, version: nil)
        let named = try ManagedObjectModel(contentsOf: bundle, version: "SampleModel")
        #expect(current.entityVersionHashesByName == named.entityVersionHashesByName)
        let car = try #require(current.entitiesByName["Car"])
        #expect(!car.subentities.isEmpty)
    }
}
