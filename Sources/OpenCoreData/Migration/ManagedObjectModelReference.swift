import Foundation
import OpenCoreDataCore

/// A model version named for a migration stage: a model at hand, or a file to load when the stage
/// runs, with the checksum it must have. Mirrors `NSManagedObjectModelReference`.
public final class ManagedObjectModelReference: Sendable {
    private enum Source: Sendable {
        case model(ManagedObjectModel)
        case file(URL)
        case named(String, URL?)
    }

    private let source: Source
    /// The checksum the model must have (``/OpenCoreDataCore/ManagedObjectModel/versionChecksum``).
    public let versionChecksum: String

    /// A reference to a model at hand.
    public init(model: ManagedObjectModel, versionChecksum: String) {
        source = .model(model)
        self.versionChecksum = versionChecksum
    }

    /// A reference to a compiled model file (`.mom`, or a version inside a `.momd`) or an
    /// Xcode `.xcdatamodel`, loaded when the stage runs.
    public init(fileURL: URL, versionChecksum: String) {
        source = .file(fileURL)
        self.versionChecksum = versionChecksum
    }

    /// A reference to the model version with this checksum among the versions of the model
    /// called `name` (found as `PersistentContainer(name:)` finds it), or in `directory`.
    public init(name: String, in directory: URL? = nil, versionChecksum: String) {
        source = .named(name, directory)
        self.versionChecksum = versionChecksum
    }

    /// The model, loaded when needed; throws 134130 when it cannot be found or its checksum is
    /// not the one given.
    public func resolvedModel() throws -> ManagedObjectModel {
        let model: ManagedObjectModel
        switch source {
        case .model(let given):
            model = given
        case .file(let url):
            model = try ManagedObjectModel(contentsOf: url, version: nil)
        case .named(let name, let directory):
            guard let url = ManagedObjectModel.url(ofModelNamed: name, in: directory.map { [$0] } ?? ManagedObjectModel.modelDirectories) else {
                throw CoreDataError(.migrationMissingSourceModel, """
                    No model named '\(name)' (\(name).momd, \(name).mom or \(name).xcdatamodeld) was found for \
                    a migration stage; copy it beside the executable or pass its directory.
                    """)
            }
            let versions = ["momd", "xcdatamodeld"].contains(url.pathExtension)
                ? try ManagedObjectModel.versions(contentsOf: url)
                : [try ManagedObjectModel(contentsOf: url, version: nil)]
            guard let found = versions.first(where: { $0.versionChecksum == versionChecksum }) else {
                throw CoreDataError(.migrationMissingSourceModel, """
                    No version of the model '\(name)' at \(url.path) has the checksum \(versionChecksum); \
                    check the checksum (ManagedObjectModel.versionChecksum, or the VersionInfo.plist Xcode \
                    writes).
                    """)
            }
            model = found
        }
        guard model.versionChecksum == versionChecksum else {
            throw CoreDataError(.migrationMissingSourceModel, """
                The model referenced for a migration stage has the checksum \(model.versionChecksum), not \
                \(versionChecksum) as the reference says; pass the checksum of the model version you mean.
                """)
        }
        return model
    }
}
