package cityref;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.slf4j.event.KeyValuePair;
import org.springframework.boot.json.JsonWriter;
import org.springframework.boot.json.JsonWriter.PairExtractor;
import org.springframework.boot.logging.structured.StructuredLogFormatter;

/**
 * The spec's JSON lines, as Spring Boot's structured console logging
 * ({@code logging.structured.format.console}): {@code ts} (RFC 3339, UTC, milliseconds), {@code level}
 * (lower case), {@code msg}, the event's SLF4J key-value pairs with their JSON types, and
 * {@code error} (the stack trace) when there is one. Everything logs through it: Spring, Tomcat
 * (JUL, bridged by Boot), the Elasticsearch client and the service.
 */
public class JsonLogFormatter implements StructuredLogFormatter<ILoggingEvent> {
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").withZone(ZoneOffset.UTC);

    private final JsonWriter<ILoggingEvent> writer;

    public JsonLogFormatter() {
        ThrowableProxyConverter stackTrace = new ThrowableProxyConverter();
        stackTrace.start();
        PairExtractor<KeyValuePair> pairs = PairExtractor.of(pair -> pair.key, pair -> pair.value);
        this.writer = JsonWriter.<ILoggingEvent>of(members -> {
                    members.add("ts", event -> TS.format(event.getInstant()));
                    members.add("level", event -> event.getLevel().toString().toLowerCase(Locale.ROOT));
                    members.add("msg", ILoggingEvent::getFormattedMessage);
                    members.add("logger", ILoggingEvent::getLoggerName);
                    members.from(ILoggingEvent::getKeyValuePairs)
                            .whenNotNull()
                            .whenNotEmpty()
                            .usingExtractedPairs(Iterable::forEach, pairs);
                    members.add("error", event -> event)
                            .whenNotNull(ILoggingEvent::getThrowableProxy)
                            .as(stackTrace::convert);
                })
                .withNewLineAtEnd();
    }

    @Override
    public String format(ILoggingEvent event) {
        return writer.writeToString(event);
    }
}
