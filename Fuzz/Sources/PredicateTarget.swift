import Foundation
import OpenCoreData
import OpenCoreDataCore

/// A predicate format string through the parser, binding to an entity, SQL compilation and
/// execution on an SQLite store, and evaluation in memory (seeds: the predicates of the tests and
/// of the fixtures' fetch request templates). `fetch` and `count(for:)` must agree.
///
/// Input: one byte choosing how many of the fixed arguments follow the format, then the format.
struct PredicateTarget: FuzzTarget {
    // Immutable after initialisation; [Any] is not Sendable only because Any is not.
    nonisolated(unsafe) static let arguments: [Any] = ["e", 7, 2.5, Date(timeIntervalSinceReferenceDate: 0), ["a", "É"], Data([1, 2]), UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), "%", NSNull()]

    let sqlite: ManagedObjectContext
    let memory: ManagedObjectContext

    init() {
        let url = scratch.appendingPathComponent("predicate.sqlite")
        removeStore(at: url)
        do {
            sqlite = try Self.context(type: .sqlite, url: url)
            memory = try Self.context(type: .inMemory, url: nil)
        } catch {
            fail("the predicate target could not set up its stores: \(error)")
        }
    }

    func run(_ input: Data) throws {
        var reader = InputReader(input)
        let count = Int(reader.byte()) % (Self.arguments.count + 1)
        let format = String(decoding: reader.rest(), as: UTF8.self)
        let predicate = NSPredicate(format: format, argumentArray: Array(Self.arguments.prefix(count)))
        try predicate.validate()
        for context in [sqlite, memory] {
            try context.performAndWait { () throws in
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = predicate
                let fetched = try context.fetch(request).count
                let counted = try context.count(for: request)
                guard fetched == counted else { fail("fetch found \(fetched) objects and count(for:) \(counted) for \(predicate)") }
            }
        }
    }

    /// A model of every attribute type with to-one and to-many relationships.
    static func model() -> ManagedObjectModel {
        let attributes: [(String, AttributeType)] = [("small", .integer16), ("medium", .integer32), ("large", .integer64), ("ratio", .double), ("single", .float),
                                                     ("flag", .boolean), ("title", .string), ("created", .date), ("payload", .binaryData), ("identifier", .uuid),
                                                     ("link", .uri), ("amount", .decimal)]
        let item = EntityDescription(name: "Item", properties: attributes.map { AttributeDescription(name: $0.0, type: $0.1) } + [
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "items"),
            RelationshipDescription(name: "owner", destination: "Tag", inverse: "owned"),
        ])
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "rank", type: .integer32),
            RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "tags"),
            RelationshipDescription(name: "owned", destination: "Item", toMany: true, inverse: "owner"),
        ])
        return ManagedObjectModel(entities: [item, tag])
    }

    /// A context on a store of `type` holding a few items and tags of varied values.
    static func context(type: PersistentStore.StoreType, url: URL?) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(type: type, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let titles = ["", "e", "É", "émile", "100%", "a_b", "zoë", "ß"]
        try context.performAndWait { () throws in
            var tags: [ManagedObject] = []
            for index in 0..<4 {
                let tag = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Tag"]!, insertInto: context)
                tag.setValue(titles[index * 2], forKey: "name")
                tag.setValue(Int32(index), forKey: "rank")
                tags.append(tag)
            }
            for index in 0..<12 {
                let item = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Item"]!, insertInto: context)
                item.setValue(Int16(index - 3), forKey: "small")
                item.setValue(Int32(index * 1000), forKey: "medium")
                item.setValue(Int64(index) << 40, forKey: "large")
                item.setValue(Double(index) / 3, forKey: "ratio")
                item.setValue(index % 2 == 0, forKey: "flag")
                item.setValue(titles[index % titles.count], forKey: "title")
                item.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400), forKey: "created")
                item.setValue(index % 3 == 0 ? nil : Data([UInt8(index)]), forKey: "payload")
                item.setValue(Decimal(index) / 4, forKey: "amount")
                item.setValue(tags[index % 4], forKey: "owner")
                item.setValue(Set(tags.prefix(index % 4)), forKey: "tags")
            }
            try context.save()
        }
        return context
    }
}
