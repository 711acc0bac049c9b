import Foundation
import OpenCoreData
import OpenCoreDataCore

/// Keyed archive → model (seeds: the fixtures' `.mom` files and their stores' inflated model
/// caches) and → compiled mapping model (seeds: the fixtures' `.cdm` files). A model that reads
/// and freezes must also write, read back, and create a store that saves an object of every
/// entity.
struct ArchiveTarget: FuzzTarget {
    func run(_ input: Data) throws {
        _ = try? MappingModel.entityMappings(compiled: input)
        let model = try ManagedObjectModel(archive: input)
        _ = model.entityVersionHashesByName
        try model.freeze()
        let again = try ManagedObjectModel(archive: CompiledModelWriter.archive(model))
        guard again.entitiesByName.keys.sorted() == model.entitiesByName.keys.sorted() else {
            fail("a model read back with other entities after writing")
        }
        try createStore(with: model)
    }
}

/// Creates an SQLite store for `model` in the scratch folder, saves an object of every entity
/// into it (`exerciseWrites`), and removes it: names and rules in a model become SQL, triggers
/// and validation here.
func createStore(with model: ManagedObjectModel, variant: UInt8 = 0) throws {
    let url = scratch.appendingPathComponent("created.sqlite")
    defer { removeStore(at: url) }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSPersistentHistoryTrackingKey: true])
    defer { try? coordinator.remove(store) }
    try exerciseWrites(coordinator, model: model, variant: variant, checked: true)
}

/// Removes a store file with its -wal and -shm.
func removeStore(at url: URL) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
}
