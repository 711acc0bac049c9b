// BM1User.swift: the entity User of Model.xcdatamodeld (version Model1), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "User")
public final class BM1User: ManagedObject {
    @Attribute(.optional)
    public var userId: Int32 = 0
    public var books: Set<BM1Book> = []
}
