import Foundation
import OpenCoreData
import Testing
import TestSupport

/// An object keeps the changes of its first 32 slots in the object itself and those of later
/// slots apart: an entity with more attributes changes, saves, undoes and merges the same way
/// on both sides of the 32nd.
@Suite(.dedicatedThread) struct WideEntityTests {
    static func model() -> ManagedObjectModel {
        let attributes = (0..<40).map { AttributeDescription(name: "a\($0)", type: .integer64, isOptional: true) }
        return ManagedObjectModel(entities: [EntityDescription(name: "Wide", managedObjectClass: ManagedObject.self, properties: attributes)])
    }

    @Test(arguments: StoreKind.allCases)
    func changesPastThe32ndSlotAreSavedUndoneAndKeptInMerges(kind: StoreKind) throws {
        let model = Self.model()
        let stack = try TestStack(kind, model: model)
        let context = stack.container.newBackgroundContext()
        context.undoManager = UndoManager()
        let id = try context.performAndWait { () throws in
            let wide = ManagedObject(entity: try #require(model.entitiesByName["Wide"]), insertInto: context)
            for slot in 0..<40 { wide.setValue(Int64(slot), forKey: "a\(slot)") }
            try context.save()
            #expect(!wide.hasChanges)
            // A change past the 32nd slot alone is a change, and only that slot is saved.
            wide.setValue(Int64(3_500), forKey: "a35")
            #expect(wide.hasChanges && wide.isUpdated)
            #expect(Set(wide.changedValues().keys) == ["a35"])
            wide.setValue(Int64(200), forKey: "a2")
            #expect(Set(wide.changedValues().keys) == ["a2", "a35"])
            // Both writes are one event, undone together: no change is left on either side.
            context.undoManager?.undo()
            #expect(wide.changedValues().isEmpty && !wide.hasChanges)
            #expect(wide.value(forKey: "a35") as? Int64 == 35 && wide.value(forKey: "a2") as? Int64 == 2)
            wide.setValue(Int64(200), forKey: "a2")
            wide.setValue(Int64(3_500), forKey: "a35")
            try context.save()
            #expect(!wide.hasChanges && wide.changedValues().isEmpty)
            return wide.objectID
        }
        // Another context changes a39; ours changes a38 and merges theirs, keeping its own.
        let other = stack.container.newBackgroundContext()
        try other.performAndWait { () throws in
            other.object(with: id).setValue(Int64(-39), forKey: "a39")
            try other.save()
        }
        try context.performAndWait { () throws in
            let wide = context.object(with: id)
            wide.setValue(Int64(-38), forKey: "a38")
            context.refresh(wide, mergeChanges: true)
            #expect(wide.value(forKey: "a38") as? Int64 == -38)
            #expect(wide.value(forKey: "a39") as? Int64 == -39)
            #expect(Set(wide.changedValues().keys) == ["a38"])
            try context.save()
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let wide = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
            let expected: [String: Int64] = ["a2": 200, "a35": 3_500, "a38": -38, "a39": -39, "a0": 0, "a31": 31, "a32": 32]
            for (key, value) in expected { #expect(wide.value(forKey: key) as? Int64 == value, "\(key)") }
        }
    }
}
