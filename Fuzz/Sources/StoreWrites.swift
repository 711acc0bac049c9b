import Foundation
import OpenCoreData
import OpenCoreDataCore

/// The write paths a fuzzed model or store reaches: through a context on `coordinator` (whose
/// store records history), one new object of every concrete entity with a value of its type in
/// every attribute (`variant` picks which), then a change and a deletion of a fetched object of
/// each entity, each saved; then the history those saves recorded, read back.
///
/// Errors are answers (validation, a damaged file); what is checked is what a user relies on once
/// a save succeeded: every object it inserted reads back by its ID, and history has a transaction
/// for it. `checked` is false for a file SQLite finds damaged, where reads may disagree.
func exerciseWrites(_ coordinator: PersistentStoreCoordinator, model: ManagedObjectModel, variant: UInt8, checked: Bool) throws {
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    context.transactionAuthor = "fuzz"
    try context.performAndWait { () throws in
        let token = coordinator.currentPersistentHistoryToken()
        var inserted: [ManagedObject] = []
        for entity in model.entities where !entity.isAbstract {
            let object = ManagedObject(entity: entity, insertInto: context)
            fill(object, variant: variant)
            inserted.append(object)
        }
        do {
            try context.save()
        } catch {
            // Refused (validation, constraints, a damaged file): the context keeps its changes,
            // as Core Data's does; a rollback must leave it clean.
            context.rollback()
            guard !context.hasChanges else { fail("a context still has changes after rollback()") }
            return
        }
        let saved = inserted.map(\.objectID)
        try readBack(saved, through: coordinator, checked: checked)
        if checked, !saved.isEmpty {
            let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
            guard !history.isEmpty else { fail("a save that inserted \(saved.count) objects recorded no history transaction") }
        }

        // A change and a deletion of a fetched object of every entity.
        for entity in model.entities where !entity.isAbstract {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.fetchLimit = 2
            let objects = try context.fetch(request)
            if let first = objects.first { fill(first, variant: variant &+ 1) }
            if objects.count > 1 { context.delete(objects[1]) }
        }
        do { try context.save() } catch { context.rollback() }
        _ = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
    }
}

/// Every attribute of `object` set to a value of its type (none for object IDs).
private func fill(_ object: ManagedObject, variant: UInt8) {
    for case let attribute as AttributeDescription in object.entity.allProperties where attribute.derivationExpression == nil {
        let small = Int(variant % 7) - 3
        let value: Any? = switch attribute.attributeType {
        case .integer16: Int16(small)
        case .integer32: Int32(small)
        case .integer64: Int64(small) << (variant % 64)
        case .decimal: Decimal(small) / 7
        case .double: variant % 5 == 0 ? Double.nan : Double(small) / 3
        case .float: Float(small) / 3
        case .string: String(repeating: "ü✓", count: Int(variant % 9))
        case .boolean: variant % 2 == 0
        case .date: Date(timeIntervalSinceReferenceDate: Double(small) * 86_400)
        case .binaryData, .transformable: Data(repeating: variant, count: Int(variant % 17))
        case .uuid: UUID()
        case .uri: URL(string: "https://example.com/\(variant)")
        case .objectID: nil
        }
        object.setValue(value, forKey: attribute.name)
    }
}

/// Every object saved reads back by its ID in a fresh context (on intact files).
private func readBack(_ ids: [ManagedObjectID], through coordinator: PersistentStoreCoordinator, checked: Bool) throws {
    let reader = ManagedObjectContext(concurrencyType: .privateQueue)
    reader.persistentStoreCoordinator = coordinator
    try reader.performAndWait { () throws in
        for id in ids {
            guard !id.isTemporaryID || !checked else { fail("an object saved without error kept a temporary ID") }
            do {
                let object = try reader.existingObject(with: id)
                for property in object.entity.allProperties { _ = object.value(forKey: property.name) }
            } catch where !checked {
                continue
            }
        }
    }
}
