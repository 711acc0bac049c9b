import Foundation

/// How a container opens one store. Mirrors `NSPersistentStoreDescription`.
///
/// ```swift
/// let description = PersistentStoreDescription(url: storeURL)   // type .sqlite
/// description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
/// container.persistentStoreDescriptions = [description]
/// ```
// @unchecked Sendable: like NSPersistentStoreDescription it is configured on one thread before
// `loadPersistentStores`; its state sits behind a lock so reads from the loading queue are safe.
public final class PersistentStoreDescription: @unchecked Sendable, CustomStringConvertible {
    private struct State {
        var type: PersistentStore.StoreType
        var url: URL?
        var configuration: String?
        var options: [String: any Sendable] = [:]
        var isReadOnly = false
        var shouldAddStoreAsynchronously = false
        var shouldMigrateStoreAutomatically = true
        var shouldInferMappingModelAutomatically = true
        var cloudKitContainerOptions: PersistentCloudKitContainerOptions?
    }
    private let state: Locked<State>

    /// Describes a store at `url` (SQLite by default).
    public init(url: URL, type: PersistentStore.StoreType = .sqlite) {
        state = Locked(State(type: type, url: url))
    }

    /// Describes a store of `type` with no file (for ``PersistentStore/StoreType/inMemory``).
    public init(type: PersistentStore.StoreType = .sqlite) {
        state = Locked(State(type: type, url: nil))
    }

    /// The store type's name, as Core Data keeps it: `NSSQLiteStoreType` (`"SQLite"`, the
    /// default) or `NSInMemoryStoreType`. ``storeType`` is the same as a typed value.
    public var type: String {
        get { storeType.rawValue }
        set { storeType = PersistentStore.StoreType(rawValue: newValue) }
    }
    /// The store type (`.sqlite` by default).
    public var storeType: PersistentStore.StoreType {
        get { state.withLock { $0.type } }
        set { state.withLock { $0.type = newValue } }
    }
    /// The store's file.
    public var url: URL? {
        get { state.withLock { $0.url } }
        set { state.withLock { $0.url = newValue } }
    }
    /// The model configuration to use.
    public var configuration: String? {
        get { state.withLock { $0.configuration } }
        set { state.withLock { $0.configuration = newValue } }
    }
    /// The CloudKit container a store would sync with on Apple's platforms. Kept, and nothing
    /// more: OpenCoreData does not sync, and the store works locally with or without it (see
    /// ``PersistentCloudKitContainerOptions``). Mirrors `cloudKitContainerOptions`.
    public var cloudKitContainerOptions: PersistentCloudKitContainerOptions? {
        get { state.withLock { $0.cloudKitContainerOptions } }
        set { state.withLock { $0.cloudKitContainerOptions = newValue } }
    }
    /// The options passed to the store.
    public var options: [String: any Sendable] { state.withLock { $0.options } }
    /// Sets an option (`NSPersistentHistoryTrackingKey`, …).
    public func setOption(_ option: (any Sendable)?, forKey key: String) {
        state.withLock { $0.options[key] = option }
    }
    /// Seconds a connection waits for another connection's lock (another process saving or
    /// migrating) before failing with 134090: `NSPersistentStoreTimeoutOption`, 10 by default.
    public var timeout: TimeInterval {
        get {
            switch options[NSPersistentStoreTimeoutOption] {
            case let seconds as Double: seconds
            case let seconds as Int: TimeInterval(seconds)
            case let seconds as NSNumber: seconds.doubleValue
            default: 10
            }
        }
        set { setOption(newValue, forKey: NSPersistentStoreTimeoutOption) }
    }
    /// The SQLite pragmas run on the store's connections (`NSSQLitePragmasOption`).
    public var sqlitePragmas: [String: any Sendable] { options[NSSQLitePragmasOption] as? [String: any Sendable] ?? [:] }
    /// Sets one SQLite pragma, e.g. `setValue("FULL", forPragmaNamed: "synchronous")` so that a
    /// power loss cannot drop an acknowledged save; `nil` removes it.
    public func setValue(_ value: (any Sendable)?, forPragmaNamed name: String) {
        state.withLock { state in
            var pragmas = state.options[NSSQLitePragmasOption] as? [String: any Sendable] ?? [:]
            pragmas[name] = value
            state.options[NSSQLitePragmasOption] = pragmas
        }
    }
    /// Opens the store read-only.
    public var isReadOnly: Bool {
        get { state.withLock { $0.isReadOnly } }
        set { state.withLock { $0.isReadOnly = newValue } }
    }
    /// Whether `loadPersistentStores(completionHandler:)` opens the store on a background queue.
    public var shouldAddStoreAsynchronously: Bool {
        get { state.withLock { $0.shouldAddStoreAsynchronously } }
        set { state.withLock { $0.shouldAddStoreAsynchronously = newValue } }
    }

    /// Whether a store written with an older model is migrated when it is added (default true,
    /// as in Core Data). Sets `NSMigratePersistentStoresAutomaticallyOption`.
    public var shouldMigrateStoreAutomatically: Bool {
        get { state.withLock { $0.shouldMigrateStoreAutomatically } }
        set { state.withLock { $0.shouldMigrateStoreAutomatically = newValue } }
    }
    /// Whether the migration infers its mapping (default true). Sets
    /// `NSInferMappingModelAutomaticallyOption`.
    public var shouldInferMappingModelAutomatically: Bool {
        get { state.withLock { $0.shouldInferMappingModelAutomatically } }
        set { state.withLock { $0.shouldInferMappingModelAutomatically = newValue } }
    }

    public var description: String { "<PersistentStoreDescription \(type) \(url?.path ?? "-")>" }
}
