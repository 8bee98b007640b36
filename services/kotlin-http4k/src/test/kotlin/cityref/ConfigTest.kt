package cityref

import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

class ConfigTest {
    @Test
    fun defaults() {
        val config = loadConfig(emptyMap())
        assertEquals(8080, config.port)
        assertEquals("http://127.0.0.1:9200", config.elasticsearchUrl.toString())
        assertEquals(2000, config.elasticsearchTimeoutMs)
        assertEquals("info", config.logLevel)
    }

    @Test
    fun `credentials are split off and redacted`() {
        val config = loadConfig(mapOf("ELASTICSEARCH_URL" to "https://user:secret@es.example:9243/prefix"))
        assertEquals("user" to "secret", config.username to config.password)
        assertEquals("https://es.example:9243/prefix", config.elasticsearchUrl.toString())
        assertEquals("https://user:***@es.example:9243/prefix", config.redactedElasticsearchUrl)
    }

    @Test
    fun `invalid values name their variable`() {
        mapOf(
            "PORT" to listOf("", "abc", "0", "65536"),
            "ELASTICSEARCH_URL" to listOf("", "ftp://x", "not a url", "http://"),
            "ELASTICSEARCH_TIMEOUT_MS" to listOf("", "0", "-5", "abc"),
            "LOG_LEVEL" to listOf("", "loud", "INFO"),
        ).forEach { (variable, values) ->
            values.forEach { value ->
                assertEquals(
                    variable,
                    assertFailsWith<ConfigException>("$variable=$value") { loadConfig(mapOf(variable to value)) }.variable,
                )
            }
        }
    }
}
