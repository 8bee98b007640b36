// The file is named after its role in the service shape (services/README.md), not after its one class.
@file:Suppress("ktlint:standard:filename")

package cityref

import cityref.generated.models.City
import com.fasterxml.jackson.databind.JsonNode

/** The service: the city and its region from [lookup], checked in the contract's order. No HTTP. */
class CityService(
    private val lookup: CityLookup,
) {
    /** Looks the city and its region up and runs the contract's checks in the contract's order. */
    fun getCity(query: CityQuery): City {
        val id = query.id
        val language = query.language.value
        val city = lookup.findCity(id, language) ?: throw AppError.CityNotFound(id)
        val countryIso = city.get("countryIso")?.takeIf { it.isTextual }?.textValue()
        val isFeatured = city.get("isFeatured")?.takeIf { it.isBoolean }?.booleanValue()
        val regionId = city.get("regionId")?.longOrNull()
        val storedId = city.get("id")?.longOrNull()
        if (countryIso == null || isFeatured == null || regionId == null || storedId == null) throw AppError.CityMalformed(id)
        val name = nameIn(city, language) ?: throw AppError.CityNameMissing(id, language)
        val region = lookup.findRegion(regionId) ?: throw AppError.RegionNotFound(regionId, id)
        val regionName = nameIn(region, language) ?: throw AppError.RegionNameMissing(regionId, language)
        return City(countryIso = countryIso, id = storedId, isFeatured = isFeatured, name = name, regionName = regionName)
    }
}

private fun JsonNode.longOrNull(): Long? = if (isIntegralNumber && canConvertToLong()) longValue() else null

/** `"name.<language>"`; absent, null, empty or not a string all count as missing. */
private fun nameIn(
    source: Source,
    language: String,
): String? =
    source
        .get("name.$language")
        ?.takeIf { it.isTextual }
        ?.textValue()
        ?.takeIf { it.isNotEmpty() }
