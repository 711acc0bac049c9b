import Foundation
import Observation
import OpenCoreDataCore

/// A descriptor's models, kept current: what SwiftUI's `@Query` gives a view, for code without
/// SwiftUI (a server, a command-line tool, a view model). `Observable`: code that read
/// ``models`` inside `withObservationTracking` is told when the results change — after the
/// context's own inserts, edits and deletes (when the context's event ends, a millisecond after them), after its
/// saves and rollbacks, and after other contexts' saves it merges.
///
/// ```swift
/// let query = try ModelQuery(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)]), in: context)
/// print(query.models.map(\.name))
/// withObservationTracking { _ = query.models } onChange: { print("the trips changed") }
/// ```
/// The descriptor needs a sort (`sortBy`): results that change are kept in a defined order. The
/// models are the context's: use them where the context is used. The observation handler runs on
/// the context's queue.
public final class ModelQuery<T: PersistentModel>: Observable {
    /// What the query follows.
    public let descriptor: FetchDescriptor<T>
    /// The context whose models the query holds.
    public let modelContext: ModelContext
    private let registrar = ObservationRegistrar()
    // Owned by the context's queue: set there by the controller's callbacks, read there by the
    // getter (through `onQueue`).
    private var current: [T] = []
    private var controller: FetchedResultsController<ManagedObject>?
    private var follower: Follower?

    /// Starts following a descriptor's results in a context. Throws when the descriptor cannot
    /// be fetched (a predicate that cannot be translated, no sort).
    public init(_ descriptor: FetchDescriptor<T>, in context: ModelContext) throws {
        guard !descriptor.sortBy.isEmpty else {
            throw CoreDataError(.coreData, """
                A ModelQuery needs a sorted descriptor, so that its results keep a defined order as they \
                change: give FetchDescriptor a sortBy.
                """)
        }
        self.descriptor = descriptor
        self.modelContext = context
        try context.onQueue {
            let controller = FetchedResultsController(fetchRequest: try context.fetchRequest(descriptor, as: ManagedObject.self),
                                                      managedObjectContext: context.managed)
            let follower = Follower { [weak self] in self?.update() }
            controller.delegate = follower
            try controller.performFetch()
            self.controller = controller
            self.follower = follower
            current = Self.models(of: controller, in: context)
        }
    }

    /// The models, in the descriptor's order.
    public var models: [T] {
        registrar.access(self, keyPath: \.models)
        return modelContext.onQueue { current }
    }

    /// On the context's queue, after a change of the results.
    private func update() {
        guard let controller else { return }
        registrar.withMutation(of: self, keyPath: \.models) {
            current = Self.models(of: controller, in: modelContext)
        }
    }

    private static func models(of controller: FetchedResultsController<ManagedObject>, in context: ModelContext) -> [T] {
        (controller.fetchedObjects ?? []).compactMap { context.model(for: $0) as? T }
    }

    /// Tells the query that the controller's results changed.
    private final class Follower: FetchedResultsControllerDelegate {
        let changed: () -> Void
        init(changed: @escaping () -> Void) { self.changed = changed }
        func controllerDidChangeContent(_ controller: AnyFetchedResultsController) { changed() }
    }
}

extension ModelContext {
    /// A descriptor's results as they change, for Swift concurrency: the identifiers of the first
    /// results, then new ones after every change that alters them (this context's own edits,
    /// saves, merges of other contexts' saves, rollback). A consumer slower than the changes gets
    /// the latest results, not every step between. Ending the loop stops following.
    ///
    /// ```swift
    /// for try await ids in context.results(for: FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)])) {
    ///     print(ids.count)          // turn identifiers into models with `model(for:)` where the context is used
    /// }
    /// ```
    /// The descriptor needs a sort (`sortBy`).
    public func results<T: PersistentModel>(for descriptor: FetchDescriptor<T>) -> AsyncThrowingStream<[PersistentIdentifier], any Error> {
        guard !descriptor.sortBy.isEmpty else {
            return AsyncThrowingStream { continuation in
                continuation.finish(throwing: CoreDataError(.coreData, """
                    Following a descriptor's results needs a sorted descriptor, so that they keep a defined \
                    order as they change: give FetchDescriptor a sortBy.
                    """))
            }
        }
        do {
            let request = try onQueue { try fetchRequest(descriptor, as: ManagedObject.self) }
            return managed.results(for: request, map: { PersistentIdentifier($0.objectID) })
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
    }
}
