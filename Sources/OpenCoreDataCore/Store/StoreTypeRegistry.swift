import Foundation

/// Store types a module adds beside the built-in ones (as Core Data's
/// `NSPersistentStoreCoordinator.registerStoreClass(_:type:)`): the PostgreSQL store registers
/// itself the first time its type is named, so adding it to a coordinator is the same call as
/// adding an SQLite store.
package enum StoreTypeRegistry {
    /// Opens a store of a registered type at `url` with the options it was added with.
    package typealias Opener = @Sendable (_ url: URL?, _ options: [String: any Sendable]) throws -> any StoreEngine
    /// Migrates the store at `url` to `model` when it was written with another version (a
    /// lightweight migration, asked for by `NSMigratePersistentStoresAutomaticallyOption` and
    /// `NSInferMappingModelAutomaticallyOption`), before it is opened.
    package typealias Migrator = @Sendable (_ url: URL?, _ model: ManagedObjectModel, _ options: [String: any Sendable]) throws -> Void

    /// The form of a store's URL that may be shown and passed around (``PersistentStore/url``,
    /// the remote-change notification): without secrets such as a password.
    package typealias Publisher = @Sendable (_ url: URL) -> URL
    /// Reads the metadata of the store at `url` without adding it (`metadataForPersistentStore`).
    package typealias MetadataReader = @Sendable (_ url: URL, _ options: [String: any Sendable]) throws -> [String: any Sendable]

    private struct Registration {
        var opener: Opener
        var migrator: Migrator?
        var publisher: Publisher?
        var metadataReader: MetadataReader?
    }

    private static let registrations = Locked<[String: Registration]>([:])

    /// Makes `type` addable to coordinators (again: the latest registration wins), and
    /// migratable when a `migrator` is given.
    package static func register(_ type: PersistentStore.StoreType, opener: @escaping Opener, migrator: Migrator? = nil, publisher: Publisher? = nil,
                                 metadataReader: MetadataReader? = nil) {
        registrations.withLock { $0[type.rawValue] = Registration(opener: opener, migrator: migrator, publisher: publisher,
                                                                  metadataReader: metadataReader) }
    }

    /// How the metadata of a registered type's store is read without adding it, or `nil`.
    package static func metadataReader(for type: PersistentStore.StoreType) -> MetadataReader? {
        registrations.withLock { $0[type.rawValue]?.metadataReader }
    }

    /// `url` as a store of `type` publishes it (unchanged for types that keep no secret in it).
    package static func publishedURL(_ url: URL, of type: PersistentStore.StoreType) -> URL {
        guard let publisher = registrations.withLock({ $0[type.rawValue]?.publisher }) else { return url }
        return publisher(url)
    }

    /// The opener of a registered type, or `nil`.
    package static func opener(for type: PersistentStore.StoreType) -> Opener? {
        registrations.withLock { $0[type.rawValue]?.opener }
    }

    /// The lightweight migration of a registered type, or `nil` when it has none.
    package static func migrator(for type: PersistentStore.StoreType) -> Migrator? {
        registrations.withLock { $0[type.rawValue]?.migrator }
    }
}
