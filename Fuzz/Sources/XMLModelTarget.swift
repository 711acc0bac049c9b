import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The `.xcdatamodel` XML reader (seeds: the fixtures' `contents` files). A model that reads and
/// freezes must also create a store that saves an object of every entity.
struct XMLModelTarget: FuzzTarget {
    func run(_ input: Data) throws {
        let file = scratch.appendingPathComponent("contents")
        try write(input, to: file)
        let model = try ManagedObjectModel(contentsOf: file, version: nil)
        _ = model.entityVersionHashesByName
        try model.freeze()
        try createStore(with: model, variant: input.last ?? 0)
    }
}

/// The `.xcmappingmodel` XML reader (seeds: the fixtures' `xcmapping.xml` files), against the
/// versions of the BookMigration fixture.
struct XMLMappingTarget: FuzzTarget {
    let models = repositoryRoot.appendingPathComponent("Tests/Fixtures/bookmigration-mhw/BookMigration-master/BookMigration/Model.xcdatamodeld")

    func run(_ input: Data) throws {
        let folder = scratch.appendingPathComponent("Fuzzed.xcmappingmodel", isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try write(input, to: folder.appendingPathComponent("xcmapping.xml"))
        let mapping = try MappingModel(contentsOf: folder, models: models)
        _ = mapping.entityMappings.map(\.valueExpressions)
    }
}

/// Writes a scratch file; a failure here is the harness's, not the library's.
func write(_ data: Data, to url: URL) throws {
    do { try data.write(to: url) } catch { fail("the harness could not write \(url.path): \(error)") }
}
