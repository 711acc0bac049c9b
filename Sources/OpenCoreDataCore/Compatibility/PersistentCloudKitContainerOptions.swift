import Foundation

/// Which CloudKit container a store would sync with, accepted so that code written for
/// `NSPersistentCloudKitContainer` compiles and runs. **Nothing syncs**: CloudKit is Apple's
/// service and exists only on Apple's platforms; a store described with these options is an
/// ordinary local store, and its history (turn on `NSPersistentHistoryTrackingKey`, as CloudKit
/// stores need anyway) is what another sync mechanism would read. Mirrors
/// `NSPersistentCloudKitContainerOptions`.
public final class PersistentCloudKitContainerOptions: Sendable {
    /// The CloudKit container's identifier (`"iCloud.com.example.App"`).
    public let containerIdentifier: String

    /// Names a CloudKit container. Mirrors `init(containerIdentifier:)`.
    public init(containerIdentifier: String) {
        self.containerIdentifier = containerIdentifier
    }
}

/// Core Data's name for ``PersistentCloudKitContainerOptions``.
public typealias NSPersistentCloudKitContainerOptions = PersistentCloudKitContainerOptions
