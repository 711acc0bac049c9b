import OpenCoreDataCore
import OpenCoreData
import Testing
import TestSupport

/// The registry a context finds its objects in (one object per row: `object(with:)` gives the
/// same instance for equal IDs, and a fetch never makes a second object for a registered row).
/// Random inserts, replacements, lookups and removals, across two root entities with the same
/// keys and two stores, against a plain dictionary; removal moves later entries of a probe run
/// back, which is where an open-addressing table loses objects when it is wrong.
@Suite(.dedicatedThread) struct ObjectRegistryTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64]) func randomOperationsAgreeWithADictionary(seed: UInt64) throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", properties: [AttributeDescription(name: "x", type: .integer64)]),
            EntityDescription(name: "B", properties: [AttributeDescription(name: "x", type: .integer64)]),
        ])
        let entities = [try #require(model.entitiesByName["A"]), try #require(model.entitiesByName["B"])]
        var random = SeededGenerator(seed: seed)
        var registry = ObjectRegistry()
        var expected: [ManagedObjectID: ManagedObject] = [:]
        func makeID() -> ManagedObjectID {
            .permanent(entities[Int.random(in: 0..<2, using: &random)], storeNumber: UInt32.random(in: 1...2, using: &random),
                       primaryKey: Int64.random(in: 1...400, using: &random))
        }
        for step in 0..<20_000 {
            let id = makeID()
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let object = ManagedObject(entity: id.entity, insertInto: nil)
                object.objectID = id
                registry[id] = object
                expected[id] = object
            case 4..<7:
                registry[id] = nil
                expected[id] = nil
            case 7:
                if step % 500 == 0 { registry.reserveCapacity(registry.count + 300) }
                let dropped = registry.removeAll { $0.map { $0.objectID.rawKey % 3 == 0 } ?? false }
                for object in dropped { expected[object.objectID] = nil }
                #expect(Set(dropped.map(ObjectIdentifier.init)).count == dropped.count)
            default:
                #expect(registry[id] === expected[id], "step \(step): lookup of \(id)")
            }
            #expect(registry.count == expected.count, "step \(step)")
        }
        for (id, object) in expected { #expect(registry[id] === object) }
        #expect(Set(registry.objects.map(ObjectIdentifier.init)) == Set(expected.values.map(ObjectIdentifier.init)))
        #expect(registry.misfiledObjects.isEmpty)
    }

    /// Equal IDs of a sub-entity and its root (an ID made from a URI naming the root) find one
    /// object, as `==` on IDs says.
    @Test func anIDNamingTheRootFindsTheSubEntitysObject() throws {
        let root = EntityDescription(name: "Root", properties: [AttributeDescription(name: "x", type: .integer64)])
        let leaf = EntityDescription(name: "Leaf", properties: [])
        root.subentities = [leaf]
        let model = ManagedObjectModel(entities: [root, leaf])
        let frozenLeaf = try #require(model.entitiesByName["Leaf"]), frozenRoot = try #require(model.entitiesByName["Root"])
        var registry = ObjectRegistry()
        let object = ManagedObject(entity: frozenLeaf, insertInto: nil)
        object.objectID = .permanent(frozenLeaf, storeNumber: 1, primaryKey: 7)
        registry[object.objectID] = object
        #expect(registry[.permanent(frozenRoot, storeNumber: 1, primaryKey: 7)] === object)
        #expect(registry[.permanent(frozenRoot, storeNumber: 2, primaryKey: 7)] == nil)
        #expect(registry[.permanent(frozenRoot, storeNumber: 1, primaryKey: 8)] == nil)
        // An object's entity is its own, whatever entity the ID assigned to it names: the ID
        // keeps naming the leaf and stays equal to the one assigned.
        let rootID = ManagedObjectID.permanent(frozenRoot, storeNumber: 1, primaryKey: 9)
        object.objectID = rootID
        #expect(object.entity === frozenLeaf)
        #expect(object.objectID.entity === frozenLeaf)
        #expect(object.objectID == rootID)
        #expect(object.objectID.primaryKey == 9)
    }
}
