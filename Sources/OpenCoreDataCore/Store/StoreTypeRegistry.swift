import Foundation

/// Store types a module adds beside the built-in ones (as Core Data's
/// `NSPersistentStoreCoordinator.registerStoreClass(_:type:)`): the PostgreSQL store registers
/// itself the first time its type is named, so adding it to a coordinator is the same call as
/// adding an SQLite store.
package enum StoreTypeRegistry {
    /// Opens a store of a registered type at `url` with the options it was added with.
    package typealias Opener = @Sendable (_ url: URL?, _ options: [String: any Sendable]) throws -> any StoreEngine

    private static let openers = Locked<[String: Opener]>([:])

    /// Makes `type` addable to coordinators (again: the latest opener wins).
    package static func register(_ type: PersistentStore.StoreType, opener: @escaping Opener) {
        openers.withLock { $0[type.rawValue] = opener }
    }

    /// The opener of a registered type, or `nil`.
    package static func opener(for type: PersistentStore.StoreType) -> Opener? {
        openers.withLock { $0[type.rawValue] }
    }
}
