import Foundation

/// One version of an app's models, as SwiftData's `VersionedSchema`: the model classes as they
/// were at that version (usually nested in the conforming enum).
///
/// ```swift
/// enum TripsV1: VersionedSchema {
///     static let versionIdentifier = Schema.Version(1, 0, 0)
///     static var models: [any PersistentModel.Type] { [Trip.self] }
///     @Model final class Trip { var name: String; init(name: String) { self.name = name } }
/// }
/// ```
public protocol VersionedSchema {
    /// The version's number.
    static var versionIdentifier: Schema.Version { get }
    /// The model classes of the version.
    static var models: [any PersistentModel.Type] { get }
}

/// How a store written with an older version of the models reaches the current one, as
/// SwiftData's `SchemaMigrationPlan`: the versions, oldest first, and a stage from each to the
/// next.
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions.
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan.
public enum MigrationStage {
    /// A migration the store infers from the two versions (added, removed and renamed
    /// properties, new defaults).
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A lightweight migration with app code around it: `willMigrate` runs on a context of the
    /// store at `fromVersion` (fix the data the next version would refuse: duplicates of a new
    /// unique attribute, say), `didMigrate` on one at `toVersion` (fill what the new version
    /// adds). Each saves what it changed.
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)
}

extension Schema {
    /// A version number: major, minor, patch.
    public struct Version: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The major number.
        public let major: Int
        /// The minor number.
        public let minor: Int
        /// The patch number.
        public let patch: Int

        /// `Schema.Version(1, 2, 0)`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        public var description: String { "\(major).\(minor).\(patch)" }
    }

    /// The schema of a versioned schema's models.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }
}

// Unchecked, so that plans keep their stages in `static let`s as SwiftData code does: a stage is
// immutable, and its closures run only while a container opening a store migrates it, on the
// thread that opens it. Closures that capture mutable state shared with other threads are not
// protected by this (as with SwiftData's own stages).
extension MigrationStage: @unchecked Sendable {}
