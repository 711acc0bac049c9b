import Foundation

extension ManagedObjectModel {
    /// Loads a model file (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`), or `nil` when it
    /// cannot. Mirrors Core Data's failable `NSManagedObjectModel(contentsOf:)`; use
    /// ``init(contentsOf:version:)`` to learn what is wrong with a file.
    public convenience init?(contentsOf url: URL) {
        do { try self.init(contentsOf: url, version: nil) } catch { return nil }
    }
}

extension ManagedObjectModel {
    /// The models in `bundles` (every `.momd`, `.mom` or `.xcdatamodeld` in their resources; the
    /// places ``init(named:in:)`` looks when `nil`), merged into one: their entities,
    /// configurations and fetch request templates together. `nil` when there is no model, one
    /// cannot be loaded, or two have an entity of the same name (Core Data cannot merge those
    /// either). A model in compiled and source form is read once (`.momd` first). Mirrors
    /// `NSManagedObjectModel.mergedModel(from:)`, as Xcode's older templates call it.
    public static func mergedModel(from bundles: [Bundle]?) -> ManagedObjectModel? {
        let directories = bundles.map { $0.compactMap { $0.resourceURL ?? $0.bundleURL } } ?? modelDirectories
        var files: [URL] = []
        var names = Set<String>()
        for directory in directories {
            let contents = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            for ext in ["momd", "mom", "xcdatamodeld"] {
                for url in contents.filter({ $0.pathExtension == ext }).sorted(by: { $0.path < $1.path })
                where names.insert(url.deletingPathExtension().lastPathComponent).inserted {
                    files.append(url)
                }
            }
        }
        var models: [ManagedObjectModel] = []
        for url in files {
            guard let model = ManagedObjectModel(contentsOf: url) else { return nil }
            models.append(model)
        }
        guard models.count > 1 else { return models.first }
        // The models were loaded here for the merge: their entities move to the merged model.
        let entities = models.flatMap(\.entities)
        guard Set(entities.map(\.name)).count == entities.count else { return nil }
        let merged = ManagedObjectModel(entities: entities)
        for model in models {
            merged.configurations.merge(model.configurations) { $0 + $1 }
            merged.fetchRequestTemplatesByName.merge(model.fetchRequestTemplatesByName) { first, _ in first }
            merged.versionIdentifiers.formUnion(model.versionIdentifiers)
            merged.unsupportedFeatures += model.unsupportedFeatures
        }
        return merged
    }
}
