// BookmarkEntity.swift: the entity BookmarkEntity of BookmarksModel.xcdatamodeld (version BookmarksModel 5), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

#if os(Linux)  // On Apple platforms, Xcode generates these classes.

import CoreData

// Not declared here (the model file keeps it; no version hash covers it): the fetch index byUUID (uuid, isPendingDeletion).
// Not declared here (the model file keeps it; no version hash covers it): the fetch index byURL (url, isPendingDeletion).
// Not declared here (the model file keeps it; no version hash covers it): favoriteFolders's renaming identifier favoriteFolder.

@Managed
public final class BookmarkEntity: ManagedObject {
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
    @Relationship(deleteRule: .cascade, inverse: \BookmarkEntity.parent)
    public var children: [BookmarkEntity] = []
    @Relationship(inverse: \BookmarkEntity.favorites)
    public var favoriteFolders: Set<BookmarkEntity> = []
    public var favorites: [BookmarkEntity] = []
    public var parent: BookmarkEntity?
}

#endif
