import OpenCoreDataCore

/// Makes an actor whose methods run on a new model context's queue, as SwiftData's
/// `@ModelActor`: they use ``ModelActor/modelContext`` and its models directly, and the
/// compiler keeps the models inside the actor (pass ``PersistentIdentifier``s out).
///
/// ```swift
/// @ModelActor actor Importer {
///     func importTrips(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name, destination: "", start: .now)) }
///         try modelContext.save()
///     }
/// }
/// try await Importer(modelContainer: container).importTrips(["Rome", "Oslo"])
/// ```
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "OpenCoreDataMacros", type: "ModelActorMacro")

/// What runs a model actor's jobs and holds its context.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context the actor's methods use.
    var modelContext: ModelContext { get }
}

/// A model executor that runs jobs one at a time on its context's queue, each as one event of
/// the context (pending changes are processed after it).
public final class DefaultSerialModelExecutor: ModelExecutor, SerialExecutor, @unchecked Sendable {
    // @unchecked: `modelContext` is not Sendable, but it is only used by jobs this executor runs,
    // which run on the context's own queue (through `contextExecutor`), one at a time.

    /// The context the actor's methods use.
    public let modelContext: ModelContext
    /// The executor on the context's queue.
    let contextExecutor: ContextExecutor

    /// An executor on `modelContext`'s queue.
    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
        self.contextExecutor = ContextExecutor(context: modelContext.managed)
    }

    /// Runs `job` on the context's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        contextExecutor.enqueue(job)
    }

    /// Traps unless the caller runs on the context's queue.
    public func checkIsolated() {
        contextExecutor.checkIsolated()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        contextExecutor.asUnownedSerialExecutor()
    }
}

/// An actor that runs on a model context's queue (what `@ModelActor` generates).
public protocol ModelActor: Actor {
    /// The container of the actor's context.
    nonisolated var modelContainer: ModelContainer { get }
    /// What runs the actor's jobs: a ``DefaultSerialModelExecutor``.
    nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
    /// The actor's executor: its context's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        guard let serial = modelExecutor as? DefaultSerialModelExecutor else {
            preconditionFailure("A ModelActor's modelExecutor must be a DefaultSerialModelExecutor, as @ModelActor makes it.")
        }
        return serial.asUnownedSerialExecutor()
    }

    /// The context the actor's methods use.
    public var modelContext: ModelContext {
        modelExecutor.modelContext
    }

    /// The model of an identifier in the actor's context, when it is of type `T` and exists.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        modelContext.existingModel(for: id)
    }
}
