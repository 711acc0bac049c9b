import Foundation

extension MappingModel {
    /// Reads a compiled mapping model (`.cdm`: what Xcode builds from an `.xcmappingmodel` into
    /// an app's bundle, an `NSKeyedArchiver` archive of `NSMappingModel`) between two model
    /// versions the caller holds. A `.cdm` does not name its versions: it records the version
    /// hash of each source and destination entity, and those must be the models' (as Core Data
    /// checks), or this throws 134140 naming the entity that differs.
    public convenience init(contentsOf url: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        guard let data = try? Data(contentsOf: url) else {
            throw CoreDataError(.coreData, "Could not read the compiled mapping model at \(url.path).")
        }
        let mappings = try Self.compiledEntityMappings(data, named: "at \(url.path)")
        for mapping in mappings {
            for (entity, hash, model, side) in [(mapping.sourceEntityName, mapping.sourceHash, sourceModel, "source"),
                                                (mapping.destinationEntityName, mapping.destinationHash, destinationModel, "destination")] {
                guard let entity, let hash else { continue }
                guard model.entityVersionHashesByName[entity] == hash else {
                    throw CoreDataError(.migrationMissingMappingModel, """
                        The compiled mapping model \(url.lastPathComponent) maps \(side) entity \(entity) of \
                        another model version than the \(side) model given (its version hash differs). Pass \
                        the model versions the mapping model was made between.
                        """)
                }
            }
        }
        self.init(name: url.deletingPathExtension().lastPathComponent, sourceModel: sourceModel, destinationModel: destinationModel,
                  entityMappings: mappings.map(\.mapping))
    }

    /// The compiled mapping model (`.cdm`) in `bundles` (their resources and the places
    /// ``ManagedObjectModel/init(named:in:)`` looks when `nil`) made between `sourceModel` and
    /// `destinationModel`: the first whose entity version hashes are theirs. `nil` when there is
    /// none. Mirrors `NSMappingModel(from:forSourceModel:destinationModel:)`.
    public convenience init?(from bundles: [Bundle]?, forSourceModel sourceModel: ManagedObjectModel?, destinationModel: ManagedObjectModel?) {
        guard let sourceModel, let destinationModel else { return nil }
        let directories = bundles.map { $0.compactMap { $0.resourceURL ?? $0.bundleURL } } ?? ManagedObjectModel.modelDirectories
        for directory in directories {
            let contents = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            for url in contents.filter({ $0.pathExtension == "cdm" }).sorted(by: { $0.path < $1.path }) {
                if let mapping = try? MappingModel(contentsOf: url, sourceModel: sourceModel, destinationModel: destinationModel) {
                    self.init(name: mapping.name, sourceModel: sourceModel, destinationModel: destinationModel,
                              entityMappings: mapping.entityMappings)
                    return
                }
            }
        }
        return nil
    }

    /// The entity mappings of a compiled mapping model's bytes, without checking them against
    /// any model (what the fuzzer reads hostile input with).
    package static func entityMappings(compiled data: Data) throws -> [EntityMapping] {
        try compiledEntityMappings(data, named: "given").map(\.mapping)
    }

    /// An entity mapping of a `.cdm` with the version hashes it records.
    private struct CompiledEntityMapping {
        var mapping: EntityMapping
        var sourceEntityName: String?
        var sourceHash: Data?
        var destinationEntityName: String?
        var destinationHash: Data?
    }

    /// `NSMappingModel`'s `NSEntityMappings`, in order: each `NSEntityMapping`'s name, entities,
    /// policy, source expression and the value expressions of its `NSAttributeMappings` and
    /// `NSRelationshipMappings` (archived `NSExpression`s, kept in predicate format). A mapping
    /// that removes an entity (no destination) makes nothing and is left out, as in the XML form.
    private static func compiledEntityMappings(_ data: Data, named place: String) throws -> [CompiledEntityMapping] {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data)
        } catch {
            throw CoreDataError(.coreData, "The compiled mapping model \(place) is not an archive: \(error.message)")
        }
        guard let model = archive.object(archive.root), model.isKind(of: "NSMappingModel") else {
            throw CoreDataError(.coreData, "The compiled mapping model \(place) holds no NSMappingModel.")
        }
        var result: [CompiledEntityMapping] = []
        for index in archive.members(model["NSEntityMappings"]) {
            guard let entity = archive.object(index), entity.isKind(of: "NSEntityMapping") else {
                throw CoreDataError(.coreData, "The compiled mapping model \(place) lists something other than an NSEntityMapping.")
            }
            func name(_ key: String) -> String? { archive.string(entity[key]).flatMap { $0.isEmpty ? nil : $0 } }
            guard let destination = name("NSDestinationEntityName") else { continue }
            let source = name("NSSourceEntityName")
            let policy = name("NSEntityMigrationPolicyClassName").flatMap { $0 == "NSEntityMigrationPolicy" ? nil : $0 }
            var mapping = EntityMapping(name: name("NSMappingName"), sourceEntityName: source, destinationEntityName: destination,
                                        migrationPolicyClassName: policy)
            if entity["NSSourceExpression"]?.uid.map({ $0 != 0 }) == true {
                mapping.sourceExpression = archive.expressionText(entity["NSSourceExpression"])
            }
            for property in archive.members(entity["NSAttributeMappings"]) + archive.members(entity["NSRelationshipMappings"]) {
                guard let propertyMapping = archive.object(property),
                      let destinationName = archive.string(propertyMapping["NSDestinationPropertyName"]),
                      propertyMapping["NSValueExpression"]?.uid.map({ $0 != 0 }) == true else { continue }
                mapping.valueExpressions[destinationName] = archive.expressionText(propertyMapping["NSValueExpression"])
            }
            guard !archive.isExhausted else {
                throw CoreDataError(.coreData, """
                    The compiled mapping model \(place) is larger than any mapping model (its archive refers \
                    to itself); it was not read.
                    """)
            }
            func hash(_ key: String) -> Data? {
                if case .data(let bytes)? = archive.value(entity[key]) { bytes } else { nil }
            }
            result.append(CompiledEntityMapping(mapping: mapping, sourceEntityName: source, sourceHash: hash("NSSourceEntityVersionHash"),
                                                destinationEntityName: destination, destinationHash: hash("NSDestinationEntityVersionHash")))
        }
        return result
    }
}
