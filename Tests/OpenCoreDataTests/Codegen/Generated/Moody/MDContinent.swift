// MDContinent.swift: the entity Continent of Moody.xcdatamodeld (version Moody), written by `ocd codegen`.
// Generate it again after changing the model rather than editing it.

import OpenCoreData

@Managed(entityName: "Continent")
public final class MDContinent: MDGeographicRegion {
    public var numberOfCountries: Int64 = 0
    @Relationship(inverse: \MDCountry.continent, isOptional: false)
    public var countries: Set<MDCountry> = []
}
