// SMPCar.swift: the entity Car of SampleModel.xcdatamodeld (version SampleModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Car", unique: [["numberPlate"]])
public class SMPCar: ManagedObject {
    @Attribute(.transformable(by: "ColorTransformer"))
    public var color: Any?
    @Transient public var currentDrivingSpeed: Int64 = 0
    public var maker: String?
    public var markedForDeletionAsOf: Date?
    public var model: String?
    @Attribute(.required)
    public var numberPlate: String?
    @Relationship(inverse: \SMPPerson.cars)
    public var owner: SMPPerson?
}
