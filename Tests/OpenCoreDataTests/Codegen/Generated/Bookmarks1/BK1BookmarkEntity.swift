// BK1BookmarkEntity.swift: the entity BookmarkEntity of BookmarksModel.xcdatamodeld (version BookmarksModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "BookmarkEntity")
public final class BK1BookmarkEntity: ManagedObject {
    public var isFavorite: Bool = false
    public var isFolder: Bool = false
    public var title: String?
    public var url: String?
    @Attribute(.required)
    public var uuid: String?
    @Relationship(deleteRule: .cascade, inverse: \BK1BookmarkEntity.parent)
    public var children: [BK1BookmarkEntity] = []
    @Relationship(inverse: \BK1BookmarkEntity.favorites)
    public var favoriteFolder: BK1BookmarkEntity?
    public var favorites: [BK1BookmarkEntity] = []
    public var parent: BK1BookmarkEntity?
}
