// SMPSportCar.swift: the entity SportCar of SampleModel.xcdatamodeld (version SampleModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "SportCar")
public class SMPSportCar: SMPCar {
}
