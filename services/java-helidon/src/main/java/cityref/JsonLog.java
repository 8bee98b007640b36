package cityref;

import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.ErrorManager;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;

/**
 * JSON lines on stdout through java.util.logging (the JDK logging Helidon itself uses):
 * {@code ts} (RFC 3339, UTC, milliseconds), {@code level} (lower case), {@code msg}, then typed
 * fields, written by Jackson's streaming generator (the JSON library the service already uses).
 * Installed by {@code logging.properties} ({@code handlers=cityref.JsonLog}).
 */
public final class JsonLog extends Handler {
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").withZone(ZoneOffset.UTC);
    private static final JsonFactory JSON = new JsonFactory();
    private static final PrintStream OUT =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    /** Key-value pairs of a log record, kept typed (numbers stay JSON numbers). */
    record Fields(Object[] keyValues) {}

    private final Formatter formatter = new Formatter() {
        @Override
        public String format(LogRecord record) {
            return JsonLog.format(record, formatMessage(record));
        }
    };

    public JsonLog() {
        setFormatter(formatter);
    }

    /** Logs {@code msg} with typed fields: {@code key1, value1, key2, value2, ...}. */
    public static void log(Logger logger, Level level, String msg, Object... keyValues) {
        if (!logger.isLoggable(level)) {
            return;
        }
        LogRecord record = new LogRecord(level, msg);
        record.setLoggerName(logger.getName());
        record.setParameters(new Object[] {new Fields(keyValues)});
        logger.log(record);
    }

    /** The root level for LOG_LEVEL (error, warn, info, debug). */
    public static void setLevel(String logLevel) {
        Level level = switch (logLevel) {
            case "error" -> Level.SEVERE;
            case "warn" -> Level.WARNING;
            case "debug" -> Level.FINE;
            default -> Level.INFO;
        };
        Logger root = LogManager.getLogManager().getLogger("");
        root.setLevel(level);
        for (Handler h : root.getHandlers()) {
            h.setLevel(level);
        }
    }

    @Override
    public void publish(LogRecord record) {
        if (!isLoggable(record)) {
            return;
        }
        try {
            String line = getFormatter().format(record);
            synchronized (OUT) {
                OUT.print(line);
                OUT.flush();
            }
        } catch (RuntimeException e) {
            reportError(null, e, ErrorManager.FORMAT_FAILURE);
        }
    }

    @Override
    public void flush() {
        OUT.flush();
    }

    @Override
    public void close() {
        flush(); // never close stdout
    }

    static String format(LogRecord record, String message) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator json = JSON.createGenerator(ObjectWriteContext.empty(), out)) {
            json.writeStartObject();
            json.writeStringProperty("ts", TS.format(record.getInstant()));
            json.writeStringProperty("level", level(record.getLevel()));
            json.writeStringProperty("msg", message == null ? "" : message);
            Object[] params = record.getParameters();
            if (params != null && params.length == 1 && params[0] instanceof Fields(Object[] kv)) {
                for (int i = 0; i + 1 < kv.length; i += 2) {
                    json.writeName(String.valueOf(kv[i]));
                    value(json, kv[i + 1]);
                }
            }
            String logger = record.getLoggerName();
            if (logger != null && !logger.startsWith("cityref")) {
                json.writeStringProperty("logger", logger);
            }
            Throwable thrown = record.getThrown();
            if (thrown != null) {
                json.writeStringProperty("error", AppError.describe(thrown));
            }
            json.writeEndObject();
        }
        return out.append('\n').toString();
    }

    private static String level(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "error";
        } else if (v >= Level.WARNING.intValue()) {
            return "warn";
        } else if (v >= Level.INFO.intValue()) {
            return "info";
        }
        return "debug";
    }

    private static void value(JsonGenerator json, Object v) {
        switch (v) {
            case null -> json.writeNull();
            case Integer i -> json.writeNumber(i);
            case Long l -> json.writeNumber(l);
            case Short s -> json.writeNumber(s);
            case Boolean b -> json.writeBoolean(b);
            case Double d when Double.isFinite(d) -> json.writeNumber(d);
            default -> json.writeString(v.toString());
        }
    }
}
