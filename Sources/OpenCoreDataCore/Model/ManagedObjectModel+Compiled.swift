import Foundation

extension ManagedObjectModel {
    /// Makes a model from a keyed archive of `NSManagedObjectModel`: the contents of a `.mom`
    /// file or of a store's inflated `Z_MODELCACHE`.
    package convenience init(archive data: Data) throws(CoreDataError) {
        let contents = try CompiledModelReader.contents(of: data)
        self.init(entities: contents.entities)
        // Before anything walks superentities (version hashes, inherited properties): a crafted
        // archive may make an entity its own ancestor.
        try checkInheritance()
        versionIdentifiers = contents.versionIdentifiers
        configurations = contents.configurations
        unsupportedFeatures = contents.unsupportedFeatures
    }

    /// The `.mom` file of a compiled model bundle (`.momd`): the version named `version`, or the
    /// current one from `VersionInfo.plist` (`NSManagedObjectModel_CurrentVersionName`).
    static func momFile(inBundle url: URL, version: String?) throws(CoreDataError) -> URL {
        let name: String
        if let version {
            name = version.hasSuffix(".mom") ? String(version.dropLast(4)) : version
        } else if let data = try? Data(contentsOf: url.appendingPathComponent("VersionInfo.plist")),
                  let info = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                  let current = info["NSManagedObjectModel_CurrentVersionName"] as? String {
            name = current
        } else {
            let moms = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".mom") }.sorted()
            guard moms.count == 1, let only = moms.first else {
                throw CoreDataError(.coreData, """
                    The compiled model bundle at \(url.path) has no VersionInfo.plist naming its current \
                    version and holds \(moms.count) .mom files; pass the version to load.
                    """)
            }
            name = String(only.dropLast(4))
        }
        let file = url.appendingPathComponent(name + ".mom")
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw CoreDataError(.coreData, "The compiled model bundle at \(url.path) has no version named '\(name)' (no \(name).mom).")
        }
        return file
    }
}
