package cityref

import cityref.generated.models.Language
import org.http4k.core.Method.GET
import org.http4k.core.Request
import org.http4k.lens.LensFailure
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

class QueryTest {
    private fun problems(query: String): List<String> =
        assertFailsWith<LensFailure> { cityQuery(Request(GET, "/city/v1/get?$query")) }.problems()

    @Test
    fun `valid query`() {
        assertEquals(CityQuery(7, Language.de), cityQuery(Request(GET, "/city/v1/get?language=de&id=007")))
        assertEquals(CityQuery(1, Language.en), cityQuery(Request(GET, "/city/v1/get?%69d=%31&language=%65n&x")))
    }

    @Test
    fun `every problem, id first`() {
        assertEquals(listOf("parameter 'id' is missing", "parameter 'language' is missing"), problems(""))
        assertEquals(
            listOf("parameter 'id' is given more than once", "parameter 'language' must be one of: cs, de, en, pl, sk"),
            problems("id=abc&id=1&language=EN"),
        )
        assertEquals(listOf("parameter 'id' must be an integer from 1 to 9223372036854775807"), problems("id=%zz&language=en"))
        assertEquals(listOf("parameter 'language' is given more than once"), problems("id=1&language=en&%6C%61nguage=de"))
    }

    @Test
    fun `undecodable names are ignored`() {
        assertEquals(CityQuery(1, Language.en), cityQuery(Request(GET, "/city/v1/get?%zz=1&id=1&language=en&id%FF=2")))
    }
}
