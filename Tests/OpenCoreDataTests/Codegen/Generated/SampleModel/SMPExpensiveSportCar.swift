// SMPExpensiveSportCar.swift: the entity ExpensiveSportCar of SampleModel.xcdatamodeld (version SampleModel), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "ExpensiveSportCar")
public final class SMPExpensiveSportCar: SMPSportCar {
    @Attribute(.optional)
    public var isLimitedEdition: Bool = false
}
