import Foundation

extension ManagedObjectModel {
    /// Finds and loads the model called `name`, where Core Data's `NSPersistentContainer(name:)`
    /// would find it in an app's main bundle: in the main bundle's resources, beside the
    /// executable, or in a SwiftPM resource bundle beside it (`<Package>_<Target>.resources`),
    /// as a compiled `name.momd` / `name.mom` or as the `name.xcdatamodeld` source, in that order
    /// in each place. `directories` replaces those places. Throws a ``CoreDataError`` listing
    /// where it looked when no model of that name is found, or what is wrong with the file.
    public convenience init(named name: String, in directories: [URL]? = nil) throws {
        guard let url = Self.url(ofModelNamed: name, in: directories ?? Self.modelDirectories) else {
            let places = (directories ?? Self.modelDirectories).map(\.path).joined(separator: ", ")
            throw CoreDataError(.coreData, """
                No model named '\(name)' (\(name).momd, \(name).mom or \(name).xcdatamodeld) in \(places). \
                Copy the model beside the executable, list it as a resource of the target (resources: \
                [.copy(\"\(name).xcdatamodeld\")]), or load it with ManagedObjectModel(contentsOf:version:).
                """)
        }
        try self.init(contentsOf: url, version: nil)
    }

    /// The first model file called `name` in `directories`.
    package static func url(ofModelNamed name: String, in directories: [URL]) -> URL? {
        let files = FileManager.default
        for directory in directories {
            for ext in ["momd", "mom", "xcdatamodeld"] {
                let url = directory.appendingPathComponent("\(name).\(ext)")
                if files.fileExists(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// The main bundle's resources, the executable's folder, and the SwiftPM resource bundles
    /// in it.
    package static var modelDirectories: [URL] {
        var directories: [URL] = []
        if let resources = Bundle.main.resourceURL { directories.append(resources) }
        if let executable = Bundle.main.executableURL?.deletingLastPathComponent() {
            directories.append(executable)
            let bundles = (try? FileManager.default.contentsOfDirectory(at: executable, includingPropertiesForKeys: nil)) ?? []
            directories += bundles.filter { $0.pathExtension == "resources" || $0.pathExtension == "bundle" }.sorted { $0.path < $1.path }
        }
        var seen = Set<String>()
        return directories.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }
}
