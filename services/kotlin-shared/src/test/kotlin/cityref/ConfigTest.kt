package cityref

import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

class ConfigTest {
    @Test
    fun defaults() {
        val config = loadConfig(emptyMap())
        assertEquals(8080, config.port)
        assertEquals("http://127.0.0.1:9200", config.elasticsearchUrl.toString())
        assertEquals(2000L, config.elasticsearchTimeoutMs)
        assertEquals("info", config.logLevel)
        assertNull(config.username)
        assertFalse(config.tracing)
    }

    @Test
    fun tracingIsOnOnlyForOtlp() {
        assertTrue(loadConfig(mapOf("OTEL_TRACES_EXPORTER" to "otlp")).tracing)
        assertFalse(loadConfig(mapOf("OTEL_TRACES_EXPORTER" to "none")).tracing)
    }

    @Test
    fun credentialsAreSplitOffAndRedacted() {
        val config = loadConfig(mapOf("ELASTICSEARCH_URL" to "https://user:s3cret@es.example:9243/prefix"))
        assertEquals("user", config.username)
        assertEquals("s3cret", config.password)
        assertEquals("https://es.example:9243/prefix", config.elasticsearchUrl.toString())
        assertEquals("https://user:xxxxx@es.example:9243/prefix", config.redactedElasticsearchUrl)
        assertFalse("s3cret" in config.redactedElasticsearchUrl)
    }

    @Test
    fun invalidValuesNameTheVariable() {
        val cases =
            mapOf(
                "PORT" to listOf("", "abc", "0", "65536", "-1", "+80", " 80", "99999999999"),
                "ELASTICSEARCH_URL" to listOf("", "ftp://127.0.0.1:9250", "not a URL", "127.0.0.1:9200", "http://"),
                "ELASTICSEARCH_TIMEOUT_MS" to listOf("", "0", "-5", "abc", "1.5", "99999999999999999999"),
                "LOG_LEVEL" to listOf("", "loud", "INFO", "trace"),
                "OTEL_TRACES_EXPORTER" to
                    listOf("", "OTLP", "None", "otlp ", " none", "console", "zipkin", "jaeger", "logging", "otlp,none", "grpc", "true"),
            )
        for ((variable, values) in cases) {
            for (value in values) {
                val e = assertFailsWith<ConfigException>("$variable=$value") { loadConfig(mapOf(variable to value)) }
                assertEquals(variable, e.variable)
            }
        }
    }

    @Test
    fun validValues() {
        val config =
            loadConfig(
                mapOf(
                    "PORT" to "65535",
                    "ELASTICSEARCH_TIMEOUT_MS" to "1",
                    "LOG_LEVEL" to "debug",
                    "ELASTICSEARCH_URL" to "http://localhost:9250",
                ),
            )
        assertEquals(65535, config.port)
        assertEquals(1L, config.elasticsearchTimeoutMs)
        assertEquals("debug", config.logLevel)
    }
}
