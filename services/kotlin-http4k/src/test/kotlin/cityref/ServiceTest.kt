package cityref

import cityref.generated.models.City
import cityref.generated.models.Language
import com.fasterxml.jackson.databind.ObjectMapper
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

/** The spec's check order against a fake lookup: each check wins over every later one. */
class ServiceTest {
    private val mapper = ObjectMapper()

    private fun doc(json: String) = mapper.readTree(json) as Source

    private class Fake(
        val city: Source?,
        val region: Source?,
    ) : CityLookup {
        val regionLookups = mutableListOf<Long>()

        override fun findCity(
            id: Long,
            language: String,
        ) = city

        override fun findRegion(id: Long): Source? {
            regionLookups += id
            return region
        }
    }

    private fun lookUp(
        city: String?,
        region: String?,
    ): Pair<Result<City>, Fake> {
        val fake = Fake(city?.let(::doc), region?.let(::doc))
        return runCatching { CityService(fake).getCity(CityQuery(7, Language.en)) } to fake
    }

    private fun failure(
        city: String?,
        region: String?,
    ): String = lookUp(city, region).first.exceptionOrNull()!!.message!!

    private val good = """{"id":7,"countryIso":"CZ","isFeatured":true,"regionId":3,"name.en":"Brno"}"""
    private val malformed = """{"id":7,"countryIso":"CZ","isFeatured":"yes","regionId":3}"""
    private val unnamed = """{"id":7,"countryIso":"CZ","isFeatured":true,"regionId":3,"name.en":""}"""
    private val region = """{"name.en":"South Moravia"}"""

    @Test
    fun cityFoundFirst() = assertEquals("Not Found: City#7 not found.", failure(null, null))

    @Test
    fun thenCityWellFormed() = assertEquals("Internal Server Error: City#7 is malformed.", failure(malformed, null))

    @Test
    fun thenCityNameBeforeAnyRegionLookup() {
        val (result, fake) = lookUp(unnamed, null)
        assertEquals("Internal Server Error: City#7 has no name in 'en'.", result.exceptionOrNull()!!.message)
        assertEquals(emptyList(), fake.regionLookups)
    }

    @Test
    fun thenRegionFound() = assertEquals("Internal Server Error: Region#3 of City#7 not found.", failure(good, null))

    @Test
    fun thenRegionName() = assertEquals("Internal Server Error: Region#3 has no name in 'en'.", failure(good, """{"name.de":"x"}"""))

    @Test
    fun rendered() {
        val (result, fake) = lookUp(good, region)
        assertEquals(City(countryIso = "CZ", id = 7, isFeatured = true, name = "Brno", regionName = "South Moravia"), result.getOrThrow())
        assertEquals(listOf(3L), fake.regionLookups)
        assertFailsWith<AppError.CityNotFound> { CityService(Fake(null, null)).getCity(CityQuery(7, Language.en)) }
    }
}
