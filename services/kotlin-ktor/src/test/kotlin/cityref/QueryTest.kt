package cityref

import cityref.generated.models.Language
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

class QueryTest {
    private val missingId = "parameter 'id' is missing"
    private val repeatedId = "parameter 'id' is given more than once"
    private val invalidId = "parameter 'id' must be an integer from 1 to 9223372036854775807"
    private val missingLanguage = "parameter 'language' is missing"
    private val repeatedLanguage = "parameter 'language' is given more than once"
    private val invalidLanguage = "parameter 'language' must be one of: cs, de, en, pl, sk"

    private fun ok(query: String) = parseCityQuery(query).let { it.id to it.language }

    private fun problems(query: String): String =
        assertFailsWith<AppError.BadRequest>(query) { parseCityQuery(query) }.message.removePrefix("Bad Request: ")

    @Test
    fun validQueries() {
        assertEquals(1L to Language.en, ok("id=1&language=en"))
        assertEquals(2L to Language.cs, ok("language=cs&id=2"))
        assertEquals(7L to Language.de, ok("id=007&language=de"))
        assertEquals(1L to Language.pl, ok("id=0000000000000000000000000000001&language=pl"))
        assertEquals(Long.MAX_VALUE to Language.sk, ok("id=9223372036854775807&language=sk"))
        assertEquals(Long.MAX_VALUE to Language.en, ok("id=0009223372036854775807&language=en"))
        assertEquals(1L to Language.en, ok("id=%31&l%61nguage=%65n"))
        assertEquals(1L to Language.en, ok("&&id=1&&language=en&"))
        assertEquals(1L to Language.en, ok("id=1&language=en&other=x&other=y&=z&x&ID=2&Language=de"))
        // A name that does not decode is ignored, even if it looks like a parameter.
        assertEquals(1L to Language.en, ok("id=1&language=en&id%zz=2&language%FF=de&id%=3&language%C3%28=de"))
    }

    @Test
    fun everyCombinationOfProblems() {
        val idCases = listOf("id=1" to null, "" to missingId, "id=1&id=1" to repeatedId, "id=x" to invalidId)
        val languageCases =
            listOf(
                "language=en" to null,
                "" to missingLanguage,
                "language=en&language=de" to repeatedLanguage,
                "language=xx" to invalidLanguage,
            )
        for ((idQuery, idProblem) in idCases) {
            for ((languageQuery, languageProblem) in languageCases) {
                val query = listOf(languageQuery, idQuery).filter { it.isNotEmpty() }.joinToString("&")
                val expected = listOfNotNull(idProblem, languageProblem)
                if (expected.isEmpty()) ok(query) else assertEquals(expected.joinToString("; "), problems(query), query)
            }
        }
    }

    @Test
    fun invalidIds() {
        for (id in listOf(
            "0",
            "00",
            "-1",
            "+1",
            "1.0",
            "1e3",
            "0x1",
            "1+",
            "1%202",
            "1%00",
            "%EF%BC%91",
            " 1",
            "9223372036854775808",
            "09223372036854775808",
            "18446744073709551617",
            "99999999999999999999",
            "1%",
            "1%3",
            "%zz",
            "1%FF",
            "",
        )) {
            assertEquals(invalidId, problems("id=$id&language=en"), id)
        }
        assertEquals(invalidId, problems("id&language=en"))
    }

    @Test
    fun invalidLanguages() {
        for (language in listOf("EN", "cz", "en-US", "en+", "en%", "en%FF", "%zz", "%C1%A5n", "%ED%A0%80", "")) {
            assertEquals(invalidLanguage, problems("id=1&language=$language"), language)
        }
        assertEquals(invalidLanguage, problems("id=1&language"))
    }

    @Test
    fun repeatedWithAnyValues() {
        assertEquals(repeatedId, problems("id=1&%69d=1&language=en"))
        assertEquals("$repeatedId; $invalidLanguage", problems("id=1&id=2&language=xx"))
        assertEquals("$invalidId; $repeatedLanguage", problems("id=x&language=en&language=de"))
    }
}
