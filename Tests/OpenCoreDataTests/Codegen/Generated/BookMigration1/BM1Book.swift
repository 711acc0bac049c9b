// BM1Book.swift: the entity Book of Model.xcdatamodeld (version Model1), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Book")
public final class BM1Book: ManagedObject {
    public var authorName: String?
    @Attribute(.transformable())
    public var fileURL: Any?
    public var title: String?
    @Relationship(inverse: \BM1User.books, minimumCount: 1)
    public var user: BM1User?
}
