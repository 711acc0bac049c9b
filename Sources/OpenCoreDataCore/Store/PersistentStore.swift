import Foundation

/// A store added to a coordinator. Mirrors `NSPersistentStore`.
///
/// The built-in types are ``PersistentStore/StoreType/sqlite`` (Core Data's SQLite layout) and
/// ``PersistentStore/StoreType/inMemory``.
public final class PersistentStore: Sendable, CustomStringConvertible {
    /// A kind of store. Mirrors `NSPersistentStore.StoreType`.
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type's name, as in Core Data (`"SQLite"`, `"InMemory"`).
        public var rawValue: String
        /// Makes a type from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Core Data's SQLite layout, in one file with WAL journaling.
        public static let sqlite = StoreType(rawValue: "SQLite")
        /// Kept in memory; gone when the coordinator is.
        public static let inMemory = StoreType(rawValue: "InMemory")
        /// The name of the PostgreSQL store's type (registered by OpenCoreDataPostgreSQL, which
        /// modules without it may still name).
        package static let postgreSQLName = "PostgreSQL"
    }

    /// The store's type.
    public let type: StoreType
    /// The store's file, for file-based stores; for a server's store, its URL without the
    /// password (a store's URL is published: messages, notifications, logs).
    public let url: URL?
    /// The configuration name (`nil`: the default configuration).
    public let configurationName: String?
    /// The options the store was added with.
    public let options: [String: any Sendable]
    package let engine: any StoreEngine

    package init(type: StoreType, url: URL?, configurationName: String?, options: [String: any Sendable], engine: any StoreEngine) {
        self.type = type
        self.url = url.map { StoreTypeRegistry.publishedURL($0, of: type) }
        self.configurationName = configurationName
        self.options = options
        self.engine = engine
    }

    /// Whether an option is on (a `Bool`, an `NSNumber` or a string such as "1" or "YES").
    package static func isOn(_ option: String, in options: [String: any Sendable]) -> Bool {
        switch options[option] {
        case let value as Bool: value
        case let value as NSNumber: value.boolValue
        case let value as Int: value != 0
        case let value as String: ["1", "YES", "TRUE"].contains(value.uppercased())
        default: false
        }
    }

    /// The store's UUID, also the host part of its objects' URIs.
    public var identifier: String { engine.identifier }
    /// The number of `identifier` that object IDs hold (`StoreNumbers`).
    package var number: UInt32 { engine.storeNumber }

    /// Whether the store refuses writes: opened with `NSReadOnlyPersistentStoreOption`, or (as
    /// Core Data does) a store that records persistent history added without
    /// `NSPersistentHistoryTrackingKey`. Mirrors `NSPersistentStore.isReadOnly`.
    public var isReadOnly: Bool { engine.isReadOnly }

    /// The store's metadata (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes`, …).
    public var metadata: [String: any Sendable] { (try? engine.metadata()) ?? [:] }

    public var description: String { "<PersistentStore \(type.rawValue) \(url?.path ?? "in memory") \(identifier)>" }
}
