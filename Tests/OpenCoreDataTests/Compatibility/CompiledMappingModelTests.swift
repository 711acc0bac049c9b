import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Compiled mapping models (`.cdm`), as an app's bundle carries them (Xcode compiles each
/// `.xcmappingmodel`): read between the two model versions they were made for, found in
/// bundles by their entities' version hashes, and followed by a migration as the source form is.
@Suite(.dedicatedThread) struct CompiledMappingModelTests {
    static let compiled = "coredataplus/Tests/Resources/SampleModel/Fixtures/V2toV3.cdm"

    static func version(_ name: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: Fixtures.url(EntityMigrationPolicyTests.samples), version: name)
    }

    /// Apple's two forms of one mapping (Xcode's XML and the compiled archive) say the same.
    @Test func theCompiledFormReadsAsTheSourceForm() throws {
        let compiled = try MappingModel(contentsOf: Fixtures.url(Self.compiled), sourceModel: Self.version("SampleModel2"), destinationModel: Self.version("SampleModel3"))
        let source = try EntityMigrationPolicyTests.sampleMapping()
        #expect(compiled.name == "V2toV3")
        func entities(_ mapping: MappingModel) -> [String] {
            mapping.entityMappings.map { "\($0.name): \($0.sourceEntityName ?? "-") → \($0.destinationEntityName) \($0.migrationPolicyClassName ?? "-")" }.sorted()
        }
        #expect(entities(compiled) == entities(source))
        for entity in source.entityMappings {
            let expressions = try #require(compiled.entityMappings.first { $0.name == entity.name }).valueExpressions
            // Every value the source form gives, the compiled form gives alike; it also spells
            // out what the source form leaves to inference: the same-named source property,
            // directly or through the migration manager for a relationship.
            for (property, expression) in entity.valueExpressions { #expect(expressions[property] == expression) }
            for (property, expression) in expressions where entity.valueExpressions[property] == nil {
                #expect(expression == "$source.\(property)" || expression.hasPrefix("FUNCTION($manager, ") && expression.hasSuffix(", $source.\(property))"))
            }
        }
        #expect(compiled.entityMappings.count == 5)
        // Each mapping's source expression is Xcode's fetch of its whole source entity (the mapping
        // editor's empty filter predicate); an added entity (Maker) has none.
        #expect(compiled.entityMappings.filter { $0.sourceEntityName == nil }.map(\.name) == ["Maker"])
        for mapping in compiled.entityMappings {
            guard let entity = mapping.sourceEntityName else {
                #expect(mapping.sourceExpression == nil)
                continue
            }
            #expect(mapping.sourceExpression == """
                FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "\(entity)", "TRUEPREDICATE"), \
                $manager.sourceContext, NO)
                """)
        }
        let car = try #require(compiled.entityMappings.first { $0.name == "CarToCar" })
        #expect(car.migrationPolicyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(car.valueExpressions["owner"] == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#)
    }

    @Test func otherModelVersionsAreRefusedNamingTheEntity() throws {
        let error = try #require(throws: CoreDataError.self) {
            try MappingModel(contentsOf: Fixtures.url(Self.compiled), sourceModel: Self.version("SampleModel"), destinationModel: Self.version("SampleModel3"))
        }
        #expect(error.code == .migrationMissingMappingModel)
        #expect(error.message.contains("source entity"))
        #expect(throws: CoreDataError.self) {
            try MappingModel(contentsOf: Fixtures.url(EntityMigrationPolicyTests.sampleStore), sourceModel: Self.version("SampleModel2"), destinationModel: Self.version("SampleModel3"))
        }
    }

    /// `NSMappingModel(from:forSourceModel:destinationModel:)`: the bundle's `.cdm` for those
    /// versions, and a migration that follows it makes what the source form makes.
    @Test func aBundlesMappingIsFoundByVersionAndFollowed() throws {
        let folder = try #require(Bundle(path: Fixtures.url(Self.compiled).deletingLastPathComponent().path))
        let (v2, v3) = (try Self.version("SampleModel2"), try Self.version("SampleModel3"))
        #expect(NSMappingModel(from: [folder], forSourceModel: try Self.version("SampleModel"), destinationModel: v3) == nil)
        let mapping = try #require(NSMappingModel(from: [folder], forSourceModel: v2, destinationModel: v3))
        let directory = TemporaryDirectory()
        let (container, cars, madeMakers, makers, owned) = try EntityMigrationPolicyTests.migratedSample(by: mapping, in: directory)
        container.viewContext.performAndWait {
            #expect(cars.count == 125)
            #expect(Int64(madeMakers.count) == makers)
            #expect(cars.allSatisfy { ($0.value(forKey: "createdBy") as? ManagedObject)?.value(forKey: "name") != nil })
            // The owners, through the compiled form's explicit FUNCTION($manager, …) mapping.
            let owners = cars.compactMap { car in (car.value(forKey: "owner") as? ManagedObject).map { "\(car.value(forKey: "numberPlate") ?? "") \($0.value(forKey: "firstName") ?? "")" } }
            #expect(owners == owned.map { "\($0[0] ?? "") \($0[1] ?? "")" })
        }
    }

    /// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`, as apps that
    /// migrate step by step call it for a version pair without a mapping model of its own: the
    /// renamed entity maps from its old name, dropped attributes map from nothing, and the
    /// migration manager following it makes what a lightweight migration makes.
    @Test func anInferredMappingModelIsFollowedAsALightweightMigrationIs() throws {
        let (v1, v2) = (try Self.version("SampleModel"), try Self.version("SampleModel2"))
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        #expect(mapping.entityMappings.map(\.destinationEntityName) == v2.entities.map(\.name).sorted())
        let luxury = try #require(mapping.entityMappings.first { $0.destinationEntityName == "LuxuryCar" })
        #expect(luxury.sourceEntityName == "ExpensiveSportCar" && luxury.name == "ExpensiveSportCarToLuxuryCar")
        #expect(luxury.valueExpressions["numberPlate"] == "$source.numberPlate")
        #expect(mapping.entityMappings.allSatisfy { $0.valueExpressions["color"] == nil && $0.valueExpressions["currentDrivingSpeed"] == nil })

        let store = "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"
        let directory = TemporaryDirectory()
        let destination = directory.file("Inferred.sqlite")
        try MigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(from: try Fixtures.copy(store, into: directory), mapping: mapping, to: destination)
        let followed = try PersistentContainer.loaded(at: destination, model: v2)
        let lightweightDirectory = TemporaryDirectory()
        let lightweight = try MigrationTests.open(store, bundle: EntityMigrationPolicyTests.samples, version: "SampleModel2", in: lightweightDirectory).container
        func content(_ container: PersistentContainer) throws -> [String] {
            try container.viewContext.performAndWait {
                try v2.entities.flatMap { entity in
                    let request = FetchRequest<ManagedObject>(entityName: entity.name)
                    request.includesSubentities = false
                    return try container.viewContext.fetch(request).map { object in
                        entity.name + ": " + entity.attributesByName.keys.sorted().map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }.joined(separator: " ")
                            + entity.relationshipsByName.keys.sorted().map { name in
                                let value = object.value(forKey: name)
                                return " \(name)#\((value as? Set<ManagedObject>)?.count ?? (value == nil ? 0 : 1))"
                            }.joined()
                    }
                }.sorted()
            }
        }
        let migrated = try content(followed)
        #expect(!migrated.isEmpty)
        #expect(migrated == (try content(lightweight)))
    }

    @Test func aPropertyThatTurnedIntoARelationshipCannotBeInferred() throws {
        let before = ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [AttributeDescription(name: "folder", type: .string)]),
            EntityDescription(name: "Folder", properties: [AttributeDescription(name: "title", type: .string)]),
        ])
        let after = ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [RelationshipDescription(name: "folder", destination: "Folder")]),
            EntityDescription(name: "Folder", properties: [AttributeDescription(name: "title", type: .string)]),
        ])
        let error = try #require(throws: CoreDataError.self) { try MappingModel.inferredMappingModel(forSourceModel: before, destinationModel: after) }
        #expect(error.code == .inferredMappingModel)
        #expect(error.message.contains("Note.folder"))
    }
}
