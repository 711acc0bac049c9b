import Foundation

extension ManagedObjectContext {
    /// A request's results as they change, for Swift concurrency: the first results, then new
    /// ones after every change that alters them (this context's own edits at the end of each
    /// event, saves, merges — automatic ones included —, refresh, rollback, reset, undo), as
    /// `Sendable` snapshots of section names and object IDs that any task may hold. A consumer
    /// slower than the changes gets the latest results, not every step between (bursts
    /// coalesce). Ending the loop (or cancelling its task) stops following the context.
    ///
    /// ```swift
    /// for try await snapshot in context.results(for: request, sectionNameKeyPath: "band") {
    ///     render(snapshot.sections)          // turn IDs into objects on a context's queue
    /// }
    /// ```
    /// The request needs a sort descriptor, as a ``FetchedResultsController``'s does; a bad
    /// request ends the sequence with its error.
    public func results<T: FetchRequestResult>(for request: FetchRequest<T>, sectionNameKeyPath: String? = nil)
        -> AsyncThrowingStream<FetchedResultsSnapshot, any Error> {
        follow(request, sectionNameKeyPath: sectionNameKeyPath) { live in AnyFetchedResultsController.snapshot(of: live, reloaded: []) }
    }

    /// A request's results as they change, each object turned into a `Sendable` value by
    /// `transform` on this context's queue (where the objects live), in order.
    ///
    /// ```swift
    /// for try await titles in context.results(for: request, map: { $0.title }) { show(titles) }
    /// ```
    public func results<T: FetchRequestResult, Value: Sendable>(for request: FetchRequest<T>, map transform: @escaping (T) -> Value)
        -> AsyncThrowingStream<[Value], any Error> {
        follow(request, sectionNameKeyPath: nil) { live in live.entries.compactMap { ($0.object as? T).map(transform) } }
    }

    private func follow<T: FetchRequestResult, Element: Sendable>(_ request: FetchRequest<T>, sectionNameKeyPath: String?,
                                                                 element: @escaping (LiveResults) -> Element) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(1))
        // The request and `element` are used only on this context's queue, in the block below and
        // in the results' updates, which run there too.
        let make = { [unowned self] in try LiveResults(request: request, context: self, sectionNameKeyPath: sectionNameKeyPath, sectionName: nil) }
        let inputs = UncheckedSendable((make, element))
        perform { [self] in
            let (make, element) = inputs.value
            do {
                let live = try make()
                try live.start()
                live.onUpdate = { [unowned live] update in
                    if update.hasChanges || update.identifiersChanged { continuation.yield(element(live)) }
                }
                // Held by the stream until it ends; then the results stop, on this context's queue.
                // A handler set on a stream that has already ended never runs: one that ended
                // before this block (dropped unread) is seen by the yield, and the handler is set
                // before the first element so that a consumer taking it and ending the loop at once,
                // on its own thread, cannot slip between the two (`stop` may then run twice).
                let held = UncheckedSendable(live)
                continuation.onTermination = { [weak self] _ in
                    self?.perform { held.value.stop() }
                }
                if case .terminated = continuation.yield(element(live)) { live.stop() }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }
}
