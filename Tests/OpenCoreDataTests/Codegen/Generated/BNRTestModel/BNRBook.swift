// BNRBook.swift: the entity Book of Sample.xcdatamodeld (version TestModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Book")
public final class BNRBook: ManagedObject {
    public var title: String?
    public var authors: Set<BNRAuthor> = []
}
