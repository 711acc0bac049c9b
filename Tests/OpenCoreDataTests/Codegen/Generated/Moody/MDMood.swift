// MDMood.swift: the entity Mood of Moody.xcdatamodeld (version Moody), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Mood")
public final class MDMood: ManagedObject {
    @Attribute(.transformable(by: "ColorsTransformer"))
    public var colors: Any?
    public var creatorID: String?
    @Attribute(.required)
    public var date: Date?
    @Attribute(.optional)
    public var latitude: Double = 0
    @Attribute(.optional)
    public var longitude: Double = 0
    @Attribute(.indexed)
    public var markedForDeletionDate: Date?
    public var markedForRemoteDeletion: Bool = false
    @Attribute(.indexed)
    public var remoteIdentifier: String?
    public var country: MDCountry?
}
