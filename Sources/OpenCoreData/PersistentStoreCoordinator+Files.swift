import Foundation
import OpenCoreDataCore
import OpenCoreDataSQLite

extension PersistentStoreCoordinator {
    /// Empties the store at `url`: its objects, metadata and history are gone and the file is
    /// left as an empty database (Core Data truncates it too). A store of this coordinator at
    /// that URL is removed from it first; other coordinators that have it open must remove it
    /// themselves. The in-memory type has nothing to destroy. Mirrors
    /// `destroyPersistentStore(at:type:options:)`.
    public func destroyPersistentStore(at url: URL, type: PersistentStore.StoreType, options: [String: any Sendable] = [:]) throws {
        guard type == .sqlite else {
            if type == .inMemory { return }
            throw CoreDataError(.persistentStoreInvalidType, "Unknown store type '\(type.rawValue)'. Use .sqlite or .inMemory.")
        }
        for store in persistentStores where store.url?.standardizedFileURL == url.standardizedFileURL { try remove(store) }
        if url.namesInMemorySQLiteStore { return }      // in memory: nothing on disk
        try SQLiteStore.destroy(at: url, options: try SQLiteStoreOptions(options: options))
    }

    /// Replaces the store at `destinationURL` by a copy of the store at `sourceURL` (objects,
    /// metadata and history; the copy keeps the source's UUID, as Core Data's does). The
    /// destination must not be open in this coordinator (remove it first): its objects would
    /// stand for rows that changed under them. Mirrors
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)`.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [String: any Sendable] = [:],
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [String: any Sendable] = [:],
                                       type: PersistentStore.StoreType) throws {
        guard type == .sqlite, !destinationURL.namesInMemorySQLiteStore, !sourceURL.namesInMemorySQLiteStore else {
            throw CoreDataError(.persistentStoreInvalidType, """
                Only SQLite stores in files can be replaced from a file; '\(type.rawValue)' (or a store at \
                /dev/null, in memory) has none.
                """)
        }
        if persistentStores.contains(where: { $0.url?.standardizedFileURL == destinationURL.standardizedFileURL }) {
            throw CoreDataError(.persistentStoreOperation, """
                The store at \(destinationURL.path) is open in this coordinator; remove it (remove(_:)) before \
                replacing it, then add it again.
                """)
        }
        try SQLiteStore.replace(at: destinationURL, from: sourceURL, options: try SQLiteStoreOptions(options: destinationOptions))
    }

    /// Rewrites the metadata of the store file at `url` (not added to a coordinator): the app's
    /// keys as given, property-list values; the store's own keys (`NSStoreType`, version hashes,
    /// …) are kept unless given, and `NSStoreUUID` sets the store's UUID. Mirrors
    /// `setMetadata(_:forPersistentStoreOfType:at:options:)`.
    public static func setMetadata(_ metadata: [String: Any], forPersistentStoreOfType type: PersistentStore.StoreType, at url: URL,
                                   options: [String: any Sendable] = [:]) throws {
        guard type == .sqlite, !url.namesInMemorySQLiteStore else {
            throw CoreDataError(.persistentStoreInvalidType, "Only SQLite stores have metadata on disk; '\(type.rawValue)' at \(url.path) has none.")
        }
        try SQLiteStore.setMetadata(metadata, at: url, options: try SQLiteStoreOptions(options: options))
    }
}
