import Foundation
import OpenCoreData

/// History tokens read back from disk (apps keep the last one they merged): decoded from JSON or
/// a property list, then used to fetch history from a store that records it (seeds: tokens of
/// that store, encoded both ways).
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
        var reader = InputReader(input)
        let json = reader.byte() & 1 == 0
        let data = Data(reader.rest())
        // swift-foundation's XML property-list decoder traps on some malformed input (found here:
        // Fuzz/findings.md); tokens are read as JSON or binary plists, as docs/Reliability.md advises.
        guard json || data.starts(with: Array("bplist00".utf8)) else { return }
        let token: PersistentHistoryToken
        do {
            token = json ? try JSONDecoder().decode(PersistentHistoryToken.self, from: data)
                         : try PropertyListDecoder().decode(PersistentHistoryToken.self, from: data)
        } catch {
            return   // Foundation's decoders answer bad data (DecodingError, or BPlistError from the plist parser)
        }
        _ = token.description
        try context.performAndWait { () throws in
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
            _ = result.transactions.map { $0.changes?.count ?? 0 }
        }
    }
}
