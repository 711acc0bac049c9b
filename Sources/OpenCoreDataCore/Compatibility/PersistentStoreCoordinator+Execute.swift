import Foundation

extension PersistentStoreCoordinator {
    /// Executes a batch request (``BatchInsertRequest``, ``BatchUpdateRequest``,
    /// ``BatchDeleteRequest``) or a history request (``PersistentHistoryChangeRequest``) for
    /// `context`, on the context's queue (this call waits for it). Returns the request's result.
    /// Mirrors `execute(_:with:)`.
    public func execute(_ request: Any, with context: ManagedObjectContext) throws -> Any {
        guard context.persistentStoreCoordinator === self else {
            throw CoreDataError(.coreData, """
                execute(_:with:) was given a context of another coordinator; execute the request on that \
                context's own coordinator.
                """)
        }
        let request = UncheckedSendable(request)
        let result: UncheckedSendable<Any> = try context.performAndWait {
            switch request.value {
            case let batch as PersistentStoreRequest: return UncheckedSendable(try context.execute(batch) as Any)
            case let history as PersistentHistoryChangeRequest: return UncheckedSendable(try context.execute(history) as Any)
            default:
                throw CoreDataError(.coreData, """
                    execute(_:with:) takes batch insert, update and delete requests and history requests, not \
                    \(type(of: request.value)). Fetch with context.fetch(_:).
                    """)
            }
        }
        return result.value
    }
}
