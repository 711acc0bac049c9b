import Foundation
import OpenCoreDataCore

/// Core Data's CloudKit container, as the container it is here: the stores open and work
/// locally, and nothing syncs (CloudKit exists only on Apple's platforms; see
/// ``/OpenCoreDataCore/PersistentCloudKitContainerOptions``). Code written for it — making one,
/// setting `cloudKitContainerOptions` on its descriptions, initializing the schema — compiles
/// and runs unchanged.
public typealias NSPersistentCloudKitContainer = PersistentContainer

/// What ``PersistentContainer/initializeCloudKitSchema(options:)`` is asked to do. Mirrors
/// `NSPersistentCloudKitContainerSchemaInitializationOptions`.
public struct PersistentCloudKitContainerSchemaInitializationOptions: OptionSet, Sendable {
    /// The bits.
    public let rawValue: UInt
    /// Makes options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Validate the model without uploading the schema.
    public static let dryRun = Self(rawValue: 1 << 1)
    /// Print the schema that would be uploaded.
    public static let printSchema = Self(rawValue: 1 << 2)
}

/// Core Data's name for ``PersistentCloudKitContainerSchemaInitializationOptions``.
public typealias NSPersistentCloudKitContainerSchemaInitializationOptions = PersistentCloudKitContainerSchemaInitializationOptions

extension PersistentContainer {
    /// Core Data uploads the model's CloudKit schema here. There is no CloudKit on this platform:
    /// it does nothing, and the container's stores keep working locally. Mirrors
    /// `initializeCloudKitSchema(options:)`.
    public func initializeCloudKitSchema(options: PersistentCloudKitContainerSchemaInitializationOptions = []) throws {}
}
