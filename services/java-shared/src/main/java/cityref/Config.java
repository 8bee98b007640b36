package cityref;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * The service's configuration, from the environment (the spec, "Operation of a service"), read
 * through a lookup by variable name: {@code System::getenv}, or the framework's own view of the
 * environment (Spring's {@code Environment}).
 *
 * @param port                   PORT, 1..65535
 * @param elasticsearchUrl       ELASTICSEARCH_URL without credentials (they are in username/password)
 * @param username               user of the URL's user info, or null
 * @param password               password of the URL's user info, or null
 * @param elasticsearchTimeoutMs ELASTICSEARCH_TIMEOUT_MS, positive
 * @param logLevel               LOG_LEVEL: error, warn, info or debug
 * @param tracing                OTEL_TRACES_EXPORTER is {@code otlp}: OpenTelemetry tracing on (the
 *                               spec's "Tracing"); unset or {@code none}: off, the default
 */
public record Config(
        int port,
        URI elasticsearchUrl,
        String username,
        String password,
        int elasticsearchTimeoutMs,
        String logLevel,
        boolean tracing) {

    static final List<String> LOG_LEVELS = List.of("error", "warn", "info", "debug");
    /**
     * OTEL_TRACES_EXPORTER's two values: {@code none} (also when unset; the SDK's own default is
     * {@code otlp}, the spec's is off) and {@code otlp}. The rest of the SDK's variables are read by the
     * OpenTelemetry SDK (or Spring Boot) itself, only when tracing is on.
     */
    static final List<String> TRACES_EXPORTERS = List.of("none", "otlp");

    /** An invalid variable; the message never repeats the value (it may hold a password). */
    public static final class ConfigException extends RuntimeException {
        @java.io.Serial
        private static final long serialVersionUID = 1L;

        private final String variable;

        ConfigException(String variable, String message) {
            super(message);
            this.variable = variable;
        }

        public String variable() {
            return variable;
        }
    }

    /** {@link #load(UnaryOperator)} from a map of variables (System.getenv(), or a test's). */
    public static Config load(Map<String, String> env) throws ConfigException {
        return load(env::get);
    }

    /**
     * Reads and validates every variable, each looked up by its name (null when unset); a variable
     * set but empty is invalid, not defaulted.
     */
    public static Config load(UnaryOperator<String> env) throws ConfigException {
        String rawPort = Objects.requireNonNullElse(env.apply("PORT"), "8080");
        int port = digitsOnly(rawPort) && rawPort.length() <= 5 ? Integer.parseInt(rawPort) : 0;
        if (port < 1 || port > 65535) {
            throw new ConfigException("PORT", "PORT must be an integer from 1 to 65535");
        }

        URI url;
        String username = null;
        String password = null;
        try {
            URI uri = new URI(Objects.requireNonNullElse(env.apply("ELASTICSEARCH_URL"), "http://127.0.0.1:9200"));
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https"))
                    || uri.getHost() == null
                    || uri.getHost().isEmpty()
                    || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                throw new URISyntaxException(uri.toString(), "not an http or https URL");
            }
            String userInfo = uri.getUserInfo();
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                username = colon < 0 ? userInfo : userInfo.substring(0, colon);
                password = colon < 0 ? null : userInfo.substring(colon + 1);
            }
            String path = uri.getPath() == null || uri.getPath().isEmpty() ? null : uri.getPath();
            url = new URI(scheme, null, uri.getHost(), uri.getPort(), path, null, null);
        } catch (URISyntaxException e) {
            throw new ConfigException("ELASTICSEARCH_URL", "ELASTICSEARCH_URL must be an http or https URL");
        }

        String rawTimeout = Objects.requireNonNullElse(env.apply("ELASTICSEARCH_TIMEOUT_MS"), "2000");
        long timeout = digitsOnly(rawTimeout) && rawTimeout.length() <= 10 ? Long.parseLong(rawTimeout) : 0;
        if (timeout < 1 || timeout > Integer.MAX_VALUE) {
            throw new ConfigException(
                    "ELASTICSEARCH_TIMEOUT_MS", "ELASTICSEARCH_TIMEOUT_MS must be a positive integer");
        }

        String logLevel = Objects.requireNonNullElse(env.apply("LOG_LEVEL"), "info");
        if (!LOG_LEVELS.contains(logLevel)) {
            throw invalidLogLevel();
        }

        String tracesExporter = Objects.requireNonNullElse(env.apply("OTEL_TRACES_EXPORTER"), "none");
        if (!TRACES_EXPORTERS.contains(tracesExporter)) {
            throw new ConfigException("OTEL_TRACES_EXPORTER", "OTEL_TRACES_EXPORTER must be one of: none, otlp");
        }
        return new Config(port, url, username, password, (int) timeout, logLevel, tracesExporter.equals("otlp"));
    }

    /** An invalid LOG_LEVEL (also what Boot's own binding of it as the root level reports). */
    static ConfigException invalidLogLevel() {
        return new ConfigException("LOG_LEVEL", "LOG_LEVEL must be one of: error, warn, info, debug");
    }

    /** The URL for log lines: the password replaced by {@code xxxxx} (the spec, "Logging"). */
    public String redactedElasticsearchUrl() {
        if (username == null) {
            return elasticsearchUrl.toString();
        }
        String auth = password == null ? username : username + ":xxxxx";
        String path = elasticsearchUrl.getRawPath() == null ? "" : elasticsearchUrl.getRawPath();
        return elasticsearchUrl.getScheme() + "://" + auth + "@" + elasticsearchUrl.getRawAuthority() + path;
    }

    @Override
    public String toString() {
        return "Config[port=" + port + ", elasticsearchUrl=" + redactedElasticsearchUrl() + ", elasticsearchTimeoutMs="
                + elasticsearchTimeoutMs + ", logLevel=" + logLevel + ", tracing=" + tracing + "]";
    }

    /** One or more ASCII digits (the spec's numbers). */
    static boolean digitsOnly(String s) {
        return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }
}
