package cityref

import cityref.generated.models.Language
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertNull

class CityQueryTest {
    private val iso = Charsets.ISO_8859_1
    private val utf8 = Charsets.UTF_8

    @Test
    fun ids() {
        assertEquals(1L, parseId("0001"))
        assertEquals(Long.MAX_VALUE, parseId("0009223372036854775807"))
        for (id in listOf("", "0", "00", "-1", "+1", " 1", "1.0", "1e3", "0x1", "9223372036854775808", "18446744073709551617", "١")) {
            assertNull(parseId(id), id)
        }
    }

    @Test
    fun languages() {
        assertEquals(Language.sk, parseLanguage("sk"))
        for (language in listOf("", "EN", "cz", "en-US", "en ")) assertNull(parseLanguage(language), language)
    }

    @Test
    fun strictFormDecoding() {
        for (charset in listOf(iso, utf8)) {
            assertEquals("a b", formDecode("a+b", charset))
            assertEquals("a+b", formDecode("a%2Bb", charset))
            assertEquals("Plzeň", formDecode("Plze%C5%88", charset))
            assertEquals("plain", formDecode("plain", charset))
            for (raw in listOf("%", "%4", "%z", "1%", "%g1", "%FF", "%C3%28", "%ED%A0%80", "%C1%A5")) {
                assertNull(formDecode(raw, charset), raw) // malformed escapes, not UTF-8, a surrogate, overlong
            }
        }
    }

    @Test
    fun literalCharactersAreTheFrameworksBytes() {
        // Netty: one char per byte of the target; Jetty: the target's bytes decoded as UTF-8.
        assertEquals("Plzeň", formDecode("Plze\u00C5\u0088", iso))
        assertNull(formDecode("\u00FF", iso))
        assertEquals("Plzeň", formDecode("Plzeň", utf8))
        assertEquals("Plzeň a", formDecode("Plze%C5%88+a", utf8))
        assertEquals("ň%", formDecode("\u00C5\u0088%25", iso))
    }

    @Test
    fun parameters() {
        assertEquals(
            listOf("id" to "1", "language" to "en", "x" to "", "e" to null),
            formParameters("&&id=1&&l%61nguage=en&x&%zz=2&e=%zz&", utf8),
        )
        assertEquals(listOf("a" to "b=c"), formParameters("a=b=c", iso))
    }
}
