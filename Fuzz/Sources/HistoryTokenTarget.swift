import Foundation
import OpenCoreData
import OpenCoreDataCore

/// History tokens read back from disk (apps keep the last one they merged): decoded from JSON,
/// then used to fetch history from a store that records it (seed: a token as JSON).
struct HistoryTokenTarget: FuzzTarget {
    let context: ManagedObjectContext

    init() {
        let url = scratch.appendingPathComponent("history.sqlite")
        removeStore(at: url)
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: PredicateTarget.model())
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSPersistentHistoryTrackingKey: true])
            context = ManagedObjectContext(concurrencyType: .privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait { () throws in
                for index in 0..<5 {
                    ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Tag"]!, insertInto: context).setValue("t\(index)", forKey: "name")
                    try context.save()
                }
            }
        } catch {
            fail("the history-token target could not set up its store: \(error)")
        }
    }

    func run(_ input: Data) throws {
        // JSON only: swift-foundation's PropertyListDecoder traps on some malformed XML and binary
        // property lists (found here; docs/Reliability.md), so tokens are saved as JSON.
        let token: PersistentHistoryToken
        do {
            token = try JSONDecoder().decode(PersistentHistoryToken.self, from: input)
        } catch {
            return   // Codable's answer to bad data
        }
        _ = token.description
        try context.performAndWait { () throws in
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
            _ = result.transactions.map { $0.changes?.count ?? 0 }
        }
    }
}
