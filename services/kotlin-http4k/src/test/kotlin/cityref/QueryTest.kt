package cityref

import cityref.generated.models.Language
import org.http4k.core.Method.GET
import org.http4k.core.Request
import org.http4k.lens.LensFailure
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull

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

    @Test
    fun ids() {
        assertEquals(9223372036854775807, parseId("0009223372036854775807"))
        listOf("", "0", "-1", "+1", " 1", "1e3", "9223372036854775808", "١").forEach { assertNull(parseId(it), it) }
    }

    @Test
    fun `strict form decoding`() {
        assertEquals("a b", formDecode("a+b"))
        assertEquals("Plzeň", formDecode("Plze%C5%88"))
        listOf("%", "%z", "1%", "%FF", "%C1%A5", "%ED%A0%80").forEach { assertNull(formDecode(it), it) }
    }
}
