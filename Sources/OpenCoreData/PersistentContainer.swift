import Foundation
import OpenCoreDataCore

/// The whole stack in one object: model, coordinator, stores and contexts. Mirrors
/// `NSPersistentContainer`.
///
/// ```swift
/// let container = PersistentContainer(name: "Notes", managedObjectModel: ManagedObjectModel(Note.self))
/// try container.loadPersistentStores()
/// let background = container.newBackgroundContext()
/// ```
///
/// ``viewContext`` is bound to the main queue. Its blocks run when the main queue is serviced:
/// in programs that call `dispatchMain()`, have an `async` `main`, or run a `RunLoop` (and under
/// `swift test`). A program whose main thread is blocked (e.g. waiting on a semaphore) never
/// runs them: use private-queue contexts there.
// @unchecked Sendable: the descriptions and the lazily made view context are behind a lock;
// everything else is immutable or Sendable.
public final class PersistentContainer: @unchecked Sendable {
    /// The container's name (also the default store file's name).
    public let name: String
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator shared by all the container's contexts.
    public let persistentStoreCoordinator: PersistentStoreCoordinator

    private struct State {
        var descriptions: [PersistentStoreDescription]
        var viewContext: ManagedObjectContext?
    }
    private let state: Locked<State>

    /// Makes a container for a model; its default store is `<defaultDirectoryURL>/<name>/<name>.sqlite`.
    public init(name: String, managedObjectModel: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = managedObjectModel
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        let url = Self.defaultDirectoryURL().appendingPathComponent(name).appendingPathComponent("\(name).sqlite")
        state = Locked(State(descriptions: [PersistentStoreDescription(url: url)]))
    }

    /// Makes a container for the model called `name`, found as Core Data finds it in an app's
    /// main bundle (see ``/OpenCoreDataCore/ManagedObjectModel/init(named:in:)``: the main bundle's resources, the
    /// executable's folder, SwiftPM resource bundles beside it). A missing or unreadable model is
    /// a deployment error and traps with a message saying where it looked, as Core Data's
    /// container cannot work without its model; use ``init(name:managedObjectModel:)`` with
    /// `try ManagedObjectModel(named:)` to handle it. Mirrors `NSPersistentContainer(name:)`.
    public convenience init(name: String) {
        let model: ManagedObjectModel
        do { model = try ManagedObjectModel(named: name) } catch {
            preconditionFailure("NSPersistentContainer(name: \"\(name)\"): \(error)")
        }
        self.init(name: name, managedObjectModel: model)
    }

    /// Where stores go by default: `$XDG_DATA_HOME`, else `~/.local/share`.
    public class func defaultDirectoryURL() -> URL {
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// The stores to open; set before loading.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { state.withLock { $0.descriptions } }
        set { state.withLock { $0.descriptions = newValue } }
    }

    /// The main-queue context, made on first use.
    public var viewContext: ManagedObjectContext {
        state.withLock { state in
            if let context = state.viewContext { return context }
            let context = ManagedObjectContext(concurrencyType: .mainQueue)
            context.persistentStoreCoordinator = persistentStoreCoordinator
            context.name = "viewContext"
            state.viewContext = context
            return context
        }
    }

    /// Opens every described store, calling `completionHandler` once per description with the
    /// error, if any. With `shouldAddStoreAsynchronously` the store opens (and the handler runs)
    /// on a background queue. Mirrors `loadPersistentStores(completionHandler:)`.
    public func loadPersistentStores(completionHandler: @escaping @Sendable (PersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            let load: @Sendable () -> Void = { [persistentStoreCoordinator] in
                do {
                    try persistentStoreCoordinator.addPersistentStore(type: description.storeType, configuration: description.configuration,
                                                                     at: description.url, options: Self.options(of: description))
                    completionHandler(description, nil)
                } catch {
                    completionHandler(description, error)
                }
            }
            if description.shouldAddStoreAsynchronously {
                DispatchQueue.global().async(execute: load)
            } else {
                load()
            }
        }
    }

    /// Opens every described store synchronously; throws the first error.
    public func loadPersistentStores() throws {
        for description in persistentStoreDescriptions {
            try persistentStoreCoordinator.addPersistentStore(type: description.storeType, configuration: description.configuration,
                                                             at: description.url, options: Self.options(of: description))
        }
    }

    private static func options(of description: PersistentStoreDescription) -> [String: any Sendable] {
        var options = description.options
        if description.isReadOnly { options[NSReadOnlyPersistentStoreOption] = true }
        if options[NSMigratePersistentStoresAutomaticallyOption] == nil {
            options[NSMigratePersistentStoresAutomaticallyOption] = description.shouldMigrateStoreAutomatically
        }
        if options[NSInferMappingModelAutomaticallyOption] == nil {
            options[NSInferMappingModelAutomaticallyOption] = description.shouldInferMappingModelAutomatically
        }
        return options
    }

    /// A new private-queue context on the coordinator. Mirrors `newBackgroundContext()`.
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context (one per call). Mirrors
    /// `performBackgroundTask(_:)`.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context and returns its result.
    public func performBackgroundTask<T: Sendable, E: Error>(_ block: @escaping @Sendable (ManagedObjectContext) throws(E) -> T) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform(schedule: .enqueued) { () throws(E) -> T in try block(context) }
    }
}
