// S3User.swift: the entity User of SampleModel3.xcdatamodeld (version SampleModel3), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "User")
public final class S3User: ManagedObject {
    @Attribute(.required)
    public var name: String?
    public var petName: String?
}
