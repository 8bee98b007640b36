package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class JsonLogTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void aLineIsOneJsonObjectWithTypedFields() throws Exception {
        LogRecord record = new LogRecord(Level.WARNING, "ignored");
        record.setInstant(Instant.parse("2026-11-27T01:02:03.456Z"));
        record.setLoggerName("io.helidon.webserver");
        record.setParameters(new Object[] {
            new JsonLog.Fields(new Object[] {"status", 503, "in_flight", 7L, "ok", true, "path", "/a\"b\\c\n\u0001"})
        });
        record.setThrown(new IllegalStateException("outer", new RuntimeException("inner")));
        String line = JsonLog.format(record, "quote \" and tab \t");
        assertTrue(line.endsWith("}\n") && line.indexOf('\n') == line.length() - 1, line);
        JsonNode json = MAPPER.readTree(line);
        assertEquals(
                List.of("ts", "level", "msg", "status", "in_flight", "ok", "path", "logger", "error"),
                List.copyOf(json.properties().stream().map(e -> e.getKey()).toList()));
        assertEquals("2026-11-27T01:02:03.456Z", json.get("ts").asText());
        assertEquals("warn", json.get("level").asText());
        assertEquals("quote \" and tab \t", json.get("msg").asText());
        assertTrue(json.get("status").isInt());
        assertTrue(json.get("in_flight").isNumber());
        assertTrue(json.get("ok").isBoolean());
        assertEquals("/a\"b\\c\n\u0001", json.get("path").asText());
        assertEquals(
                "IllegalStateException: outer <- RuntimeException: inner",
                json.get("error").asText());
    }

    @Test
    void theServicesOwnLoggerIsNotNamed() throws Exception {
        LogRecord record = new LogRecord(Level.INFO, "m");
        record.setLoggerName("cityref.Main");
        JsonNode json = MAPPER.readTree(JsonLog.format(record, "listening"));
        assertEquals("info", json.get("level").asText());
        assertTrue(json.get("logger") == null, json.toString());
    }
}
