import Foundation
import OpenCoreData

public final class QuakeStore: Sendable {
    public let container: PersistentContainer

    public init(url: URL? = nil) throws {
        container = PersistentContainer(name: "Earthquakes", managedObjectModel: ManagedObjectModel(Quake.self))
        let description = url.map { PersistentStoreDescription(url: $0) } ?? container.persistentStoreDescriptions[0]
        description.setOption(true, forKey: NSPersistentHistoryTrackingKey)
        description.setOption(true, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
    }
}
