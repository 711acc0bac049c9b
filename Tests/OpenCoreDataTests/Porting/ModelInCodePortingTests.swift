import Foundation
import OpenCoreData
import Testing
import TestSupport

/// A model built in code with Core Data's case names (`.stringAttributeType`,
/// `.cascadeDeleteRule`), as libraries and test suites write it.
@Suite(.dedicatedThread) struct ModelInCodePortingTests {
    @Test func coreDataCaseNamesBuildAWorkingModel() throws {
        let title = NSAttributeDescription(name: "title", type: .stringAttributeType)
        let count = NSAttributeDescription(name: "count", type: .integer32AttributeType)
        let items = NSRelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "list")
        items.deleteRule = .cascadeDeleteRule
        let list = NSEntityDescription(name: "List", properties: [title, count, items])
        let item = NSEntityDescription(name: "Item", properties: [
            NSAttributeDescription(name: "done", type: .booleanAttributeType),
            NSRelationshipDescription(name: "list", destination: "List", inverse: "items"),
        ])
        let stack = try TestStack(.inMemory, model: NSManagedObjectModel(entities: [list, item]))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let groceries = NSManagedObject(entity: list, insertInto: context)
            groceries.setValue("Groceries", forKey: "title")
            groceries.setValue(Int32(2), forKey: "count")
            let milk = NSManagedObject(entity: item, insertInto: context)
            milk.setValue(true, forKey: "done")
            milk.setValue(groceries, forKey: "list")
            try context.save()
            context.delete(groceries)                      // cascades to its items
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)
        }
        #expect(list.attributesByName["title"]?.attributeType == .string)
    }
}
