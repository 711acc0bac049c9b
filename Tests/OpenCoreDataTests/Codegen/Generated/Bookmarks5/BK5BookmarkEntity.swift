// BK5BookmarkEntity.swift: the entity BookmarkEntity of BookmarksModel.xcdatamodeld (version BookmarksModel 5), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

// Not declared here (the model file keeps it; no version hash covers it): the fetch index byUUID (uuid, isPendingDeletion).
// Not declared here (the model file keeps it; no version hash covers it): the fetch index byURL (url, isPendingDeletion).
// Not declared here (the model file keeps it; no version hash covers it): favoriteFolders's renaming identifier favoriteFolder.

@Managed(entityName: "BookmarkEntity")
public final class BK5BookmarkEntity: ManagedObject {
    public var isFolder: Bool = false
    @Attribute(.optional, .indexed, .hashModifier("3"))
    public var isPendingDeletion: Bool = false
    public var lastChildrenPayloadReceivedFromSync: String?
    public var modifiedAt: Date?
    public var title: String?
    @Attribute(.hashModifier("3"))
    public var url: String?
    @Attribute(.required, .hashModifier("3"))
    public var uuid: String?
    @Relationship(deleteRule: .cascade, inverse: \BK5BookmarkEntity.parent)
    public var children: [BK5BookmarkEntity] = []
    @Relationship(inverse: \BK5BookmarkEntity.favorites)
    public var favoriteFolders: Set<BK5BookmarkEntity> = []
    public var favorites: [BK5BookmarkEntity] = []
    public var parent: BK5BookmarkEntity?
}
