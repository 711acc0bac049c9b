// BNRAuthor.swift: the entity Author of Sample.xcdatamodeld (version TestModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Author")
public final class BNRAuthor: ManagedObject {
    public var firstName: String?
    public var lastName: String?
    @Relationship(inverse: \BNRBook.authors)
    public var books: Set<BNRBook> = []
}
