package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class JsonLogTest {
    private static final JsonMapper MAPPER = new JsonMapper();

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
        assertEquals("2026-11-27T01:02:03.456Z", json.get("ts").asString());
        assertEquals("warn", json.get("level").asString());
        assertEquals("quote \" and tab \t", json.get("msg").asString());
        assertTrue(json.get("status").isInt());
        assertTrue(json.get("in_flight").isNumber());
        assertTrue(json.get("ok").isBoolean());
        assertEquals("/a\"b\\c\n\u0001", json.get("path").asString());
        assertEquals(
                "IllegalStateException: outer: RuntimeException: inner",
                json.get("error").asString());
    }

    @Test
    void theServicesOwnLoggerIsNotNamed() throws Exception {
        LogRecord record = new LogRecord(Level.INFO, "m");
        record.setLoggerName("cityref.Main");
        JsonNode json = MAPPER.readTree(JsonLog.format(record, "listening"));
        assertEquals("info", json.get("level").asString());
        assertTrue(json.get("logger") == null, json.toString());
    }
}
