import Foundation
import OpenCoreData
import Testing
import TestSupport

/// Every fixture the reference decoders' output in `Tests/Fixtures/Decoded/` describes: our model
/// readers (compiled `.mom`, `Z_MODELCACHE`) give the same entities and hashes, and a store we
/// create from each model has exactly the predicted schema, entity numbers and metadata hashes.
@Suite(.dedicatedThread) struct ReferenceDecoderTests {
    static let decoded = Fixtures.decoded

    /// A decoded reference: the fixture it describes and its predicted model and schema.
    struct Reference: CustomTestStringConvertible, Sendable {
        let name: String
        let fixture: String
        let isStore: Bool
        var testDescription: String { name }

        /// The decoded JSON: the model part (`model` of a store, the whole file for a `.mom`) and
        /// the store part.
        func json() throws -> (model: [String: Any]?, store: [String: Any]) {
            let data = try Data(contentsOf: ReferenceDecoderTests.decoded.appendingPathComponent(name))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (isStore ? object["model"] as? [String: Any] : object, object)
        }

        /// The model our readers load for this fixture.
        func loadModel() throws -> ManagedObjectModel {
            let url = Fixtures.url(fixture)
            return isStore ? try ManagedObjectModel(cachedInStoreAt: url) : try ManagedObjectModel(contentsOf: url, version: nil)
        }
    }

    static let references: [Reference] = {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: decoded.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = try? Data(contentsOf: decoded.appendingPathComponent(name)),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let file = (object["store"] as? String).map({ "fixtures/" + $0 }) ?? object["file"] as? String else { return nil }
            return Reference(name: name, fixture: String(file.dropFirst("fixtures/".count)), isStore: object["store"] != nil)
        }
    }()

    static let withModels = references.filter { reference in (try? reference.json().model) != nil }

    @Test func everyDecodedFixtureIsCovered() {
        // 24 references: 18 stores and 6 compiled models.
        #expect(Self.references.count == 24)
        #expect(Self.withModels.count == 23)
    }

    @Test(arguments: withModels)
    func modelsMatchTheReference(_ reference: Reference) throws {
        let model = try reference.loadModel()
        let json = try reference.json()
        let expected = try #require(json.model)
        let entities = try #require(expected["entities"] as? [[String: Any]])
        #expect(Set(model.entities.map(\.name)) == Set(entities.compactMap { $0["name"] as? String }))
        for described in entities {
            let name = try #require(described["name"] as? String)
            let entity = try #require(model.entitiesByName[name])
            #expect(entity.versionHash.hex == described["versionHash"] as? String, "\(name)")
            #expect(entity.isAbstract == (described["abstract"] as? Bool ?? false), "\(name)")
            #expect(entity.superentity?.name == described["superentity"] as? String, "\(name)")
            #expect(entity.uniquenessConstraints == (described["uniquenessConstraints"] as? [[String]] ?? []), "\(name)")
            for property in described["properties"] as? [[String: Any]] ?? [] {
                guard let propertyName = property["name"] as? String, property["kind"] as? String != "fetchedProperty" else { continue }
                let ours = try #require(entity.propertiesByName[propertyName], "\(name).\(propertyName)")
                #expect(ours.versionHash.hex == property["versionHash"] as? String, "\(name).\(propertyName)")
                #expect(ours.isOptional == (property["optional"] as? Bool), "\(name).\(propertyName)")
                #expect(ours.isTransient == (property["transient"] as? Bool), "\(name).\(propertyName)")
                if let relationship = ours as? RelationshipDescription {
                    #expect(relationship.destinationEntityName == property["destinationEntity"] as? String)
                    #expect(relationship.inverseName == property["inverseRelationship"] as? String)
                    #expect(relationship.deleteRule.rawValue == property["deleteRule"] as? UInt)
                    #expect(relationship.isOrdered == (property["ordered"] as? Bool))
                } else if let attribute = ours as? AttributeDescription {
                    #expect(attribute.attributeType.rawValue == property["attributeType"] as? UInt, "\(name).\(propertyName)")
                }
            }
        }
        if reference.isStore {
            let stored = try #require(json.store["metadata"] as? [String: Any])
            let hashes = try #require(stored["NSStoreModelVersionHashes"] as? [String: String])
            #expect(model.entityVersionHashesByName.mapValues(\.hex) == hashes)
        }
    }

    @Test(arguments: withModels)
    func aStoreWeCreateHasThePredictedSchema(_ reference: Reference) throws {
        let model = try reference.loadModel()
        let json = try reference.json()
        let expected = try #require(json.model)
        let directory = TemporaryDirectory()
        let url = directory.file("Created.sqlite")
        _ = try PersistentContainer.loaded(at: url, model: model)
        let db = try RawSQLite(url)

        // Entity numbering.
        let numbers = try #require(expected["entityNumbers"] as? [String: [String: Int]])
        let rows = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
        let ours = Dictionary(uniqueKeysWithValues: rows.map { ($0[1] as! String, ["Z_ENT": Int($0[0] as! Int64), "Z_SUPER": Int($0[2] as! Int64)]) })
        #expect(ours == numbers)

        // Tables and columns: names, declared types, order.
        let tables = try #require(expected["sqlTables"] as? [String: [[Any]]])
        for (table, columns) in tables {
            let info = try db.rows("PRAGMA table_info(\(table))")
            #expect(info.map { "\($0[1]!) \($0[2]!)" } == columns.map { "\($0[0]) \($0[1])" }, "\(reference.name): \(table)")
        }
        let ourTables = try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')").map { $0[0] as! String }
        #expect(Set(ourTables) == Set(tables.keys), "\(reference.name)")

        // Indexes: names, uniqueness, columns.
        var indexes = try #require(expected["sqlIndexes"] as? [String: [Any]])
        // Caches written before fetch indexes (framework 637, Moody) list indexed attributes
        // without the fetch index Core Data now adds for each (CoreDataFormat.md §2.3); we write the
        // modern form.
        for entity in expected["entities"] as? [[String: Any]] ?? [] where entity["fetchIndexes"] == nil {
            let name = entity["name"] as! String
            let root = try #require(model.entitiesByName[name]).rootEntity.name.uppercased()
            for property in entity["properties"] as? [[String: Any]] ?? [] where property["indexed"] as? Bool == true {
                let propertyName = property["name"] as! String
                indexes["Z_\(name)_\(propertyName)"] = ["Z" + root, false, ["Z" + propertyName.uppercased()]]
            }
        }
        let ourIndexes = try db.rows("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        #expect(Set(ourIndexes.map { $0[0] as! String }) == Set(indexes.keys), "\(reference.name)")
        for (name, description) in indexes {
            let columns = try db.rows("PRAGMA index_info(\(name))").map { $0[2] as! String }
            let unique = try db.rows("PRAGMA index_list(\(description[0]))").first { $0[1] as? String == name }?[2] as? Int64
            #expect(columns == description[2] as? [String], "\(reference.name): \(name)")
            #expect((unique == 1) == (description[1] as? Bool), "\(reference.name): \(name)")
        }

        // The metadata's hashes are the reference's.
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        let hashes = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        if reference.isStore {
            let stored = try #require(json.store["metadata"] as? [String: Any])
            #expect(hashes.mapValues(\.hex) == stored["NSStoreModelVersionHashes"] as? [String: String])
            // The digests Core Data adds (framework 977 and 1333 on) come out the same.
            for key in ["NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey"] {
                if let theirs = stored[key] as? String { #expect(metadata[key] as? String == theirs, "\(reference.name): \(key)") }
            }
        } else {
            let described = try #require(expected["entities"] as? [[String: Any]])
            #expect(hashes.mapValues(\.hex) == Dictionary(uniqueKeysWithValues: described.map { ($0["name"] as! String, $0["versionHash"] as! String) }))
        }
    }

    @Test func aStoreWithoutAModelCacheIsAClearError() throws {
        let directory = TemporaryDirectory()
        let store = try Fixtures.copy("bookmigration-mhw/BookMigration-master/BookMigration/Model1.sqlite", into: directory)
        let error = try #require(throws: CoreDataError.self) { try ManagedObjectModel(cachedInStoreAt: store) }
        #expect(error.code == .coreData)
        #expect(error.message.contains("carries no model"))
    }
}

/// The model a store we create carries in `Z_MODELCACHE`: the reference decoder's layout, and
/// the same model back.
@Suite(.dedicatedThread) struct ModelCacheTests {
    @Test(arguments: ReferenceDecoderTests.withModels)
    func aStoreWeCreateCarriesItsModel(_ reference: ReferenceDecoderTests.Reference) throws {
        let model = try reference.loadModel()
        let directory = TemporaryDirectory()
        let url = directory.file("Cached.sqlite")
        _ = try PersistentContainer.loaded(at: url, model: model)
        let db = try RawSQLite(url)
        let content = try #require(try db.rows("SELECT Z_CONTENT FROM Z_MODELCACHE").first?.first as? Data)
        #expect(!content.starts(with: Array("bplist00".utf8)), "the archive is deflated")
        let cached = try ManagedObjectModel(cachedInStoreAt: url)
        #expect(cached.entityVersionHashesByName == model.entityVersionHashesByName)
        for entity in model.entities {
            let twin = try #require(cached.entitiesByName[entity.name])
            #expect(twin.managedObjectClassName == entity.managedObjectClassName)
            #expect(twin.superentity?.name == entity.superentity?.name)
            #expect(twin.renamingIdentifier == entity.renamingIdentifier)
            #expect(Set(twin.indexes.map(\.name)).isSuperset(of: entity.indexes.map(\.name)))
            for property in entity.properties where !(property is FetchedPropertyDescription) {   // not archived
                let other = try #require(twin.propertiesByName[property.name])
                #expect(other.isOptional == property.isOptional && other.isTransient == property.isTransient)
                if let attribute = property as? AttributeDescription, let other = other as? AttributeDescription, attribute.derivationExpression == nil {
                    #expect(other.attributeType == attribute.attributeType)
                    #expect(other.storedDefault == attribute.storedDefault || attribute.attributeType == .decimal, "\(entity.name).\(property.name)")
                    #expect(other.valueTransformerName == attribute.valueTransformerName)
                }
                if let relationship = property as? RelationshipDescription, let other = other as? RelationshipDescription {
                    #expect(other.inverseName == relationship.inverseName && other.deleteRule == relationship.deleteRule && other.isOrdered == relationship.isOrdered)
                }
            }
        }
    }
}
