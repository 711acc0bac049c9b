public import Foundation
internal import OpenCoreData

/// Where and how a container stores its models, as SwiftData's `ModelConfiguration`.
///
/// ```swift
/// ModelConfiguration(isStoredInMemoryOnly: true)                 // tests
/// ModelConfiguration(url: URL(fileURLWithPath: "/var/lib/app/trips.store"))
/// ```
/// The store is an SQLite file in Core Data's layout, which is the layout SwiftData writes: a
/// store copied from an Apple device opens here, and one written here opens there. App group
/// and CloudKit settings are accepted and recorded so that shared code compiles; nothing syncs
/// here (docs/SwiftData.md).
public struct ModelConfiguration: Hashable, Sendable {
    /// The configuration's name (`"default"` unless given).
    public let name: String
    /// The store's file.
    public let url: URL
    /// Whether the store lives in memory only (gone with the container).
    public let isStoredInMemoryOnly: Bool
    /// Whether contexts may save (false: the store opens read-only and saves fail).
    public let allowsSave: Bool
    /// The app group the store would live in on Apple platforms; recorded only.
    public let groupContainer: GroupContainer
    /// The CloudKit database the store would sync with on Apple platforms; recorded only.
    public let cloudKitDatabase: CloudKitDatabase
    /// The models this configuration's store holds, when a container has several stores (`nil`:
    /// every model of the container).
    public let schema: Schema?

    /// A configuration whose store is `default.store` (or `<name>.store`) in the data
    /// directory (`$XDG_DATA_HOME`, else `~/.local/share`), or in memory.
    public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
                groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .automatic) {
        let name = name ?? "default"
        self.name = name
        self.url = isStoredInMemoryOnly ? URL(fileURLWithPath: "/dev/null") : Self.defaultDirectory.appendingPathComponent("\(name).store")
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.groupContainer = groupContainer
        self.cloudKitDatabase = cloudKitDatabase
        self.schema = schema
    }

    /// A configuration whose store is the file at `url` (`/dev/null`: in memory).
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true,
                cloudKitDatabase: CloudKitDatabase = .automatic) {
        self.name = name ?? "default"
        self.url = url
        self.isStoredInMemoryOnly = url.isFileURL && url.standardizedFileURL.path == "/dev/null"
        self.allowsSave = allowsSave
        self.groupContainer = .automatic
        self.cloudKitDatabase = cloudKitDatabase
        self.schema = schema
    }

    /// Configurations are equal when they name the same store the same way and hold the same
    /// model classes.
    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        (lhs.name, lhs.url, lhs.isStoredInMemoryOnly, lhs.allowsSave) == (rhs.name, rhs.url, rhs.isStoredInMemoryOnly, rhs.allowsSave)
            && (lhs.groupContainer, lhs.cloudKitDatabase) == (rhs.groupContainer, rhs.cloudKitDatabase)
            && lhs.schemaTypes == rhs.schemaTypes
    }

    /// Hashes what tells configurations apart: the name, the store's URL and the model classes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(schemaTypes)
    }

    /// The identities of the schema's model classes (a `Schema` is a class without equality).
    private var schemaTypes: [ObjectIdentifier]? { schema?.types.map { ObjectIdentifier($0) } }

    /// The folder of stores given no URL: the persistent container's (`$XDG_DATA_HOME`, else
    /// `~/.local/share`).
    static var defaultDirectory: URL { PersistentContainer.defaultDirectoryURL() }

    /// An app group on Apple platforms; recorded only.
    public struct GroupContainer: Hashable, Sendable {
        let identifier: String?
        /// The app's first group, on Apple platforms.
        public static let automatic = GroupContainer(identifier: nil)
        /// No group.
        public static let none = GroupContainer(identifier: "")
        /// A named group.
        public static func identifier(_ identifier: String) -> GroupContainer { GroupContainer(identifier: identifier) }
    }

    /// A CloudKit database on Apple platforms; recorded only: nothing syncs here.
    public struct CloudKitDatabase: Hashable, Sendable {
        let identifier: String?
        /// The app's CloudKit container, on Apple platforms.
        public static let automatic = CloudKitDatabase(identifier: nil)
        /// No CloudKit.
        public static let none = CloudKitDatabase(identifier: "")
        /// A named private database.
        public static func `private`(_ identifier: String) -> CloudKitDatabase { CloudKitDatabase(identifier: identifier) }
    }
}
