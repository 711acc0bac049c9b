import Foundation
import OpenCoreDataCore

/// The property list Core Data keeps in `Z_METADATA.Z_PLIST`: the model's version hashes and
/// what wrote the store. Written and read alike by every store with Core Data's tables.
package enum StoreMetadataPlist {
    /// The Core Data framework version our stores claim (`NSPersistenceFrameworkVersion`).
    package static let frameworkVersion = 1344

    /// The binary property list for a new store of `storeType` (`"SQLite"`, `"PostgreSQL"`).
    package static func make(model: ManagedObjectModel, storeType: String) throws -> Data {
        let hashes = model.entityVersionHashesByName
        let ordered = hashes.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
        let digest = ordered.reduce(into: [UInt8]()) { $0 += Array($1.key.utf8) + Array($1.value) }
        var plist: [String: Any] = [
            "NSStoreType": storeType,
            "NSStoreModelVersionHashes": hashes,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": Array(model.versionIdentifiers).sorted(),
            "NSPersistenceFrameworkVersion": frameworkVersion,
            "NSStoreModelVersionChecksumKey": ManagedObjectModel.versionChecksum(of: hashes),
            "NSStoreModelVersionHashesDigest": Data(SHA512.hash(digest)).base64EncodedString(),
        ]
        if storeType == "SQLite" { plist["_NSAutoVacuumLevel"] = "2" }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// The metadata a store answers: the plist's keys (version hashes as `[String: Data]`), plus
    /// `NSStoreUUID` and `NSStoreType`, as Core Data returns them. An unreadable plist gives
    /// only those two.
    package static func read(_ data: Data?, uuid: String?, storeType: String) -> [String: any Sendable] {
        var result: [String: any Sendable] = [:]
        if let data {
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            for (key, value) in plist as? [String: Any] ?? [:] {
                if key == "NSStoreModelVersionHashes", let hashes = value as? [AnyHashable: Any] {
                    var converted: [String: Data] = [:]
                    for (name, hash) in hashes { if let name = name as? String, let hash = hash as? Data { converted[name] = hash } }
                    result[key] = converted
                } else if let sendable = sendablePropertyListValue(value) {
                    result[key] = sendable
                }
            }
        }
        if let uuid { result["NSStoreUUID"] = uuid }
        result["NSStoreType"] = storeType
        return result
    }

    /// The entities whose version hashes differ between a store's metadata and `model`, each
    /// with why ("not in the store", "not in the model", "changed"); empty when they agree.
    package static func differences(_ metadata: [String: any Sendable], model: ManagedObjectModel) -> [String] {
        let stored = metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        let current = model.entityVersionHashesByName
        return Set(stored.keys).union(current.keys).filter { stored[$0] != current[$0] }.sorted().map { name in
            stored[name] == nil ? "\(name) (not in the store)" : current[name] == nil ? "\(name) (not in the model)" : "\(name) (changed)"
        }
    }

    /// Keys of the metadata the store itself writes and reads.
    package static let storeOwnedKeys: Set<String> = [
        "NSStoreType", "NSStoreUUID", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
        "NSStoreModelVersionIdentifiers", "NSPersistenceFrameworkVersion", "_NSAutoVacuumLevel",
        "NSStoreModelVersionChecksumKey", "NSStoreModelVersionHashesDigest",
    ]

    /// The plist that keeps the store's own keys of `current` and takes the app's keys from
    /// `metadata` (UUIDs live in their own column, never in the plist). Throws 134030 when a
    /// value is not a property-list value (nothing is written then).
    package static func replacingAppKeys(_ metadata: [String: Any], over current: [String: Any]) throws -> Data {
        var plist: [String: Any] = [:]
        for (key, value) in current where storeOwnedKeys.contains(key) && key != "NSStoreUUID" { plist[key] = value }
        for (key, value) in metadata where key != "NSStoreUUID" { plist[key] = value }
        guard PropertyListSerialization.propertyList(plist, isValidFor: .binary) else {
            throw CoreDataError(.persistentStoreOperation, """
                Store metadata must be property-list values (strings, numbers, dates, data, arrays and \
                dictionaries of them); nothing was written.
                """)
        }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }
}
