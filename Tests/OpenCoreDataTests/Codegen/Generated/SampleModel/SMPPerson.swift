// SMPPerson.swift: the entity Person of SampleModel.xcdatamodeld (version SampleModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Person", unique: [["firstName", "lastName"]])
public final class SMPPerson: ManagedObject {
    public var firstName: String?
    @Attribute(.required, .preserveValueOnDeletion)
    public var id: UUID?
    @Transient public var isDriving: Bool = false
    public var lastName: String?
    @Attribute(.required)
    public var updatedAt: Date?
    public var cars: Set<SMPCar> = []
}
