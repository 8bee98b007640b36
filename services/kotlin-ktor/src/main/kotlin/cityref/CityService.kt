package cityref

import cityref.generated.models.City

/** The service: the city and its region from [lookup], checked in the contract's order. No HTTP. */
class CityService(
    private val lookup: CityLookup,
) {
    /** The city, then (only once the city passed its checks) its region: kotlin-shared's CityDocuments.kt. */
    suspend fun getCity(query: CityQuery): City {
        val city = storedCity(query, lookup.findCity(query.id, query.language.value))
        return city.toCity(regionName(query, city, lookup.findRegion(city.regionId)))
    }
}
