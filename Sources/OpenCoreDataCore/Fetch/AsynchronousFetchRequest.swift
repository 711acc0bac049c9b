import Foundation

/// A fetch that runs later on its context's queue and hands its results to a completion block
/// there, with a `Progress` to follow or cancel it: `context.execute(request)` returns at once.
/// Mirrors `NSAsynchronousFetchRequest`.
///
/// ```swift
/// let request = AsynchronousFetchRequest(fetchRequest: Quake.fetchRequest()) { result in
///     show(result.finalResult ?? [])          // on the context's queue
/// }
/// let pending = try context.execute(request) as? AsynchronousFetchResult<Quake>
/// pending?.progress?.cancel()                 // before it runs: the block gets no results
/// ```
public final class AsynchronousFetchRequest<ResultType>: PersistentStoreRequest {
    /// The fetch to run.
    public let fetchRequest: FetchRequest<ResultType>
    /// Called on the context's queue when the fetch is over (finished, failed or cancelled).
    public let completionBlock: ((AsynchronousFetchResult<ResultType>) -> Void)?
    /// Results the caller expects, for the progress's total (0: unknown until the fetch ends).
    public var estimatedResultCount: Int = 0

    /// A request that runs `fetchRequest` and calls `completionBlock` with its results.
    public init(fetchRequest: FetchRequest<ResultType>, completionBlock: ((AsynchronousFetchResult<ResultType>) -> Void)?) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
        super.init(entityName: fetchRequest.entity?.name ?? fetchRequest.entityName ?? "")
    }

    override func startedOnItsOwn(in context: ManagedObjectContext) -> PersistentStoreResult? { start(in: context) }
}

/// The result of an ``AsynchronousFetchRequest``: empty until the fetch has run on the context's
/// queue. Mirrors `NSAsynchronousFetchResult`. Read it on the context's queue.
public final class AsynchronousFetchResult<ResultType>: PersistentStoreResult {
    /// The request it answers.
    public let fetchRequest: AsynchronousFetchRequest<ResultType>
    /// The context the fetch runs in.
    public private(set) weak var managedObjectContext: ManagedObjectContext?
    /// Follows the fetch (one unit per result once they are known); cancelling it before the fetch
    /// runs skips the fetch.
    public let progress: Progress?
    /// The results, once the fetch has run; `nil` before, and when it failed or was cancelled.
    public fileprivate(set) var finalResult: [ResultType]?
    /// Why the fetch failed, or 3072 (`NSUserCancelledError`) when it was cancelled.
    public fileprivate(set) var operationError: (any Error)?

    init(request: AsynchronousFetchRequest<ResultType>, context: ManagedObjectContext) {
        fetchRequest = request
        managedObjectContext = context
        progress = Progress(totalUnitCount: Int64(max(request.estimatedResultCount, 1)))
        super.init(result: nil)
    }

    /// Cancels the fetch if it has not run yet. Mirrors `cancel()`.
    public func cancel() { progress?.cancel() }
}

extension AsynchronousFetchRequest {
    /// Schedules the fetch on the context's queue and returns its (empty) result at once.
    func start(in context: ManagedObjectContext) -> PersistentStoreResult {
        let result = AsynchronousFetchResult(request: self, context: context)
        // The request, its result and the block stay on the context's queue from here: the
        // caller hands them over (Core Data's contract for asynchronous fetches).
        let handed = UncheckedSendable(result)
        context.perform {
            let result = handed.value
            if result.progress?.isCancelled == true {
                result.operationError = CocoaError(.userCancelled)
            } else {
                do {
                    let objects = try context.fetch(result.fetchRequest.fetchRequest)
                    result.finalResult = objects
                    if let progress = result.progress {
                        progress.totalUnitCount = Int64(objects.count)
                        progress.completedUnitCount = Int64(objects.count)
                    }
                } catch {
                    result.operationError = error
                }
            }
            result.fetchRequest.completionBlock?(result)
        }
        return result
    }
}
