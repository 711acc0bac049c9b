import Foundation
import OpenCoreDataCore

extension PersistentStoreCoordinator {
    /// Opens a store of the named type (`NSSQLiteStoreType`, `NSInMemoryStoreType`) and adds it;
    /// see ``addPersistentStore(type:configuration:at:options:)``. Mirrors
    /// `addPersistentStore(ofType:configurationName:at:options:)`.
    @discardableResult
    public func addPersistentStore(ofType storeType: String, configurationName: String?, at url: URL?,
                                   options: [AnyHashable: Any]?) throws -> PersistentStore {
        try addPersistentStore(type: PersistentStore.StoreType(rawValue: storeType), configuration: configurationName, at: url,
                               options: try Self.sendableOptions(options ?? [:]))
    }

    /// The metadata of a store file of the named type, without adding it. Mirrors
    /// `metadataForPersistentStore(ofType:at:options:)`.
    public static func metadataForPersistentStore(ofType storeType: String, at url: URL,
                                                  options: [AnyHashable: Any]? = nil) throws -> [String: any Sendable] {
        try metadataForPersistentStore(type: PersistentStore.StoreType(rawValue: storeType), at: url, options: try sendableOptions(options ?? [:]))
    }

    /// Empties the store file of the named type. Mirrors `destroyPersistentStore(at:ofType:options:)`.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        try destroyPersistentStore(at: url, type: PersistentStore.StoreType(rawValue: storeType), options: try Self.sendableOptions(options ?? [:]))
    }

    /// Moves a store to a new location and type. Mirrors
    /// `migratePersistentStore(_:to:options:withType:)`; see
    /// ``PersistentStoreCoordinator/migratePersistentStore(_:to:options:type:)``.
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       withType storeType: String) throws -> PersistentStore {
        try migratePersistentStore(store, to: url, options: try Self.sendableOptions(options ?? [:]),
                                   type: PersistentStore.StoreType(rawValue: storeType))
    }

    /// Replaces a store file by a copy of another. Mirrors
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                       ofType storeType: String) throws {
        try replacePersistentStore(at: destinationURL, destinationOptions: try Self.sendableOptions(destinationOptions ?? [:]),
                                   withPersistentStoreFrom: sourceURL, sourceOptions: try Self.sendableOptions(sourceOptions ?? [:]),
                                   type: PersistentStore.StoreType(rawValue: storeType))
    }

    /// Rewrites a store file's metadata. Mirrors `setMetadata(_:forPersistentStoreOfType:at:options:)`.
    public static func setMetadata(_ metadata: [String: Any], forPersistentStoreOfType storeType: String, at url: URL,
                                   options: [AnyHashable: Any]? = nil) throws {
        try setMetadata(metadata, forPersistentStoreOfType: PersistentStore.StoreType(rawValue: storeType), at: url,
                        options: try sendableOptions(options ?? [:]))
    }

    /// Core Data's options dictionary (`[AnyHashable: Any]`, values such as `true`, `NSNumber`,
    /// strings, pragma dictionaries) as the typed options the stores read.
    ///
    /// The values are taken as `Sendable` unchecked (Swift cannot test for `Sendable` at run
    /// time, and `Any` and `any Sendable` share one layout): Core Data's options are property-list
    /// values, models and handlers that the caller hands over and does not change afterwards.
    static func sendableOptions(_ options: [AnyHashable: Any]) throws(CoreDataError) -> [String: any Sendable] {
        var result: [String: any Sendable] = [:]
        for (key, value) in options {
            guard let key = key.base as? String else {
                throw CoreDataError(.persistentStoreInvalidType,
                                    "Store option keys are strings (NSPersistentHistoryTrackingKey, …); got \(key.base).")
            }
            result[key] = unsafeBitCast(value as Any, to: (any Sendable).self)   // `as Any`: not opened
        }
        return result
    }
}
