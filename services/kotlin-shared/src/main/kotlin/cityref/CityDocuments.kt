package cityref

import cityref.generated.models.City
import com.fasterxml.jackson.databind.JsonNode

/**
 * A city document that passed the checks before its region is looked up. This file holds the
 * service's checks on the documents, in the spec's order, and the rendering into the generated
 * [City]; each service's `CityService` calls them around its own lookups (a `suspend` one in Ktor,
 * a blocking one in http4k). No HTTP, no Elasticsearch: only the documents' `_source`.
 */
data class StoredCity(
    val id: Long,
    val countryIso: String,
    val isFeatured: Boolean,
    val regionId: Long,
    val name: String,
)

/**
 * The city [query] asked for, from its document: city found (404), well-formed (500: `countryIso`
 * a string, `isFeatured` a boolean, `regionId` and `id` integers), named in the language (500).
 */
fun storedCity(
    query: CityQuery,
    source: Source?,
): StoredCity {
    val language = query.language.value
    val city = source ?: throw AppError.CityNotFound(query.id)
    val countryIso = city.get("countryIso")?.takeIf { it.isTextual }?.textValue()
    val isFeatured = city.get("isFeatured")?.takeIf { it.isBoolean }?.booleanValue()
    val regionId = city.get("regionId")?.longOrNull()
    val storedId = city.get("id")?.longOrNull()
    if (countryIso == null || isFeatured == null || regionId == null || storedId == null) throw AppError.CityMalformed(query.id)
    val name = nameIn(city, language) ?: throw AppError.CityNameMissing(query.id, language)
    return StoredCity(storedId, countryIso, isFeatured, regionId, name)
}

/** The name of [city]'s region, from its document: region found (500), named in the language (500). */
fun regionName(
    query: CityQuery,
    city: StoredCity,
    source: Source?,
): String {
    val region = source ?: throw AppError.RegionNotFound(city.regionId, query.id)
    return nameIn(region, query.language.value) ?: throw AppError.RegionNameMissing(city.regionId, query.language.value)
}

/** The answer's body. */
fun StoredCity.toCity(regionName: String): City =
    City(countryIso = countryIso, id = id, isFeatured = isFeatured, name = name, regionName = regionName)

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
