package cityref

import cityref.generated.models.City
import cityref.generated.models.Language
import com.fasterxml.jackson.databind.ObjectMapper
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

/** The spec's check order on the documents: each check wins over every later one. */
class CityDocumentsTest {
    private val mapper = ObjectMapper()

    private fun doc(json: String) = mapper.readTree(json) as Source

    private val query = CityQuery(7, Language.en)
    private val good = doc("""{"id":7,"countryIso":"CZ","isFeatured":true,"regionId":3,"name.en":"Brno"}""")

    private fun cityFailure(json: String?): String =
        assertFailsWith<AppError> { storedCity(query, json?.let(::doc)) }.message

    private fun regionFailure(json: String?): String =
        assertFailsWith<AppError> { regionName(query, storedCity(query, good), json?.let(::doc)) }.message

    @Test
    fun cityFoundFirst() = assertEquals("Not Found: City#7 not found.", cityFailure(null))

    @Test
    fun thenCityWellFormed() {
        for (json in listOf(
            """{"id":7,"countryIso":"CZ","isFeatured":"yes","regionId":3}""",
            """{"id":7,"countryIso":1,"isFeatured":true,"regionId":3,"name.en":"Brno"}""",
            """{"id":7,"countryIso":"CZ","isFeatured":true,"regionId":"3","name.en":"Brno"}""",
            """{"id":7.5,"countryIso":"CZ","isFeatured":true,"regionId":3,"name.en":"Brno"}""",
            """{"countryIso":"CZ","isFeatured":true,"regionId":3,"name.en":"Brno"}""",
        )) {
            assertEquals("Internal Server Error: City#7 is malformed.", cityFailure(json), json)
        }
    }

    @Test
    fun thenCityName() {
        for (name in listOf("", "null", "1", "\"\"")) {
            val json = """{"id":7,"countryIso":"CZ","isFeatured":true,"regionId":3${if (name.isEmpty()) "" else ",\"name.en\":$name"}}"""
            assertEquals("Internal Server Error: City#7 has no name in 'en'.", cityFailure(json), json)
        }
    }

    @Test
    fun thenRegionFound() = assertEquals("Internal Server Error: Region#3 of City#7 not found.", regionFailure(null))

    @Test
    fun thenRegionName() = assertEquals("Internal Server Error: Region#3 has no name in 'en'.", regionFailure("""{"name.de":"x"}"""))

    @Test
    fun rendered() {
        val city = storedCity(query, good)
        assertEquals(StoredCity(7, "CZ", true, 3, "Brno"), city)
        assertEquals(
            City(countryIso = "CZ", id = 7, isFeatured = true, name = "Brno", regionName = "South Moravia"),
            city.toCity(regionName(query, city, doc("""{"name.en":"South Moravia"}"""))),
        )
    }
}
