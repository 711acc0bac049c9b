// MDGeographicRegion.swift: the entity GeographicRegion of Moody.xcdatamodeld (version Moody), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(abstract: true, entityName: "GeographicRegion", unique: [["numericISO3166Code", "uniquenessDummy"]])
public class MDGeographicRegion: ManagedObject {
    public var markedForDeletionDate: Date?
    public var numberOfMoods: Int64 = 0
    public var numericISO3166Code: Int16 = 0
    public var uniquenessDummy: Int16 = 0
    @Attribute(.required)
    public var updatedAt: Date?
}
