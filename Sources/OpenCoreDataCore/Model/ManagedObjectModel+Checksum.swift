import Foundation

extension ManagedObjectModel {
    /// The model version's checksum, as Core Data computes it (`versionChecksum`; the
    /// `NSStoreModelVersionChecksumKey` of a store's metadata and the value Xcode writes into a
    /// model bundle's `VersionInfo.plist`): base64 of SHA-256 over the entities' version hashes
    /// in code-point order of their names. Staged migration names model versions by it.
    public var versionChecksum: String {
        Self.versionChecksum(of: entityVersionHashesByName)
    }

    /// The checksum of a model version known by its entities' version hashes (a store's
    /// `NSStoreModelVersionHashes`).
    package static func versionChecksum(of hashes: [String: Data]) -> String {
        let ordered = hashes.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
        let bytes = ordered.reduce(into: [UInt8]()) { $0 += Array($1.value) }
        return Data(SHA256.hash(bytes)).base64EncodedString()
    }
}
