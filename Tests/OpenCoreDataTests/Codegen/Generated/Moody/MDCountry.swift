// MDCountry.swift: the entity Country of Moody.xcdatamodeld (version Moody), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Country")
public final class MDCountry: MDGeographicRegion {
    public var continent: MDContinent?
    @Relationship(inverse: \MDMood.country, isOptional: false)
    public var moods: Set<MDMood> = []
}
