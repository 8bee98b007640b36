package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigTest {
    @Test
    void defaults() throws Exception {
        Config config = Config.load(Map.of());
        assertEquals(8080, config.port());
        assertEquals("http://127.0.0.1:9200", config.elasticsearchUrl().toString());
        assertNull(config.username());
        assertEquals(2000, config.elasticsearchTimeoutMs());
        assertEquals("info", config.logLevel());
        assertFalse(config.tracing());
    }

    @ParameterizedTest
    @CsvSource({"none,false", "otlp,true"})
    void tracingOnlyWithTheOtlpExporter(String value, boolean tracing) throws Exception {
        assertEquals(tracing, Config.load(Map.of("OTEL_TRACES_EXPORTER", value)).tracing());
    }

    @Test
    void credentialsAreSplitOffAndRedacted() throws Exception {
        Config config = Config.load(Map.of("ELASTICSEARCH_URL", "https://user:secret@es.example:9243/prefix"));
        assertEquals("https://es.example:9243/prefix", config.elasticsearchUrl().toString());
        assertEquals("user", config.username());
        assertEquals("secret", config.password());
        assertEquals("https://user:xxxxx@es.example:9243/prefix", config.redactedElasticsearchUrl());
    }

    @ParameterizedTest
    @CsvSource({
        "PORT,abc",
        "PORT,0",
        "PORT,65536",
        "PORT,''",
        "ELASTICSEARCH_URL,ftp://x",
        "ELASTICSEARCH_URL,not a url",
        "ELASTICSEARCH_URL,''",
        "ELASTICSEARCH_TIMEOUT_MS,0",
        "ELASTICSEARCH_TIMEOUT_MS,-5",
        "ELASTICSEARCH_TIMEOUT_MS,abc",
        "LOG_LEVEL,loud",
        "LOG_LEVEL,''",
        "OTEL_TRACES_EXPORTER,console",
        "OTEL_TRACES_EXPORTER,OTLP",
        "OTEL_TRACES_EXPORTER,'otlp,console'",
        "OTEL_TRACES_EXPORTER,''"
    })
    void invalidValuesNameTheVariable(String variable, String value) {
        var e = assertThrows(Config.ConfigException.class, () -> Config.load(Map.of(variable, value)));
        assertEquals(variable, e.variable());
    }
}
