package cityref;

import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The spec's variables as Spring Boot binds them ({@code cityref.*}, each mapped from its variable in
 * application.properties, with the spec's default), validated as they are bound: an invalid value
 * fails the binding with java-shared's {@link Config.ConfigException} naming the variable (the
 * spec's rules, shared with the other Java service), which {@link StartupFailureAnalyzer} reports.
 */
@ConfigurationProperties("cityref")
record Settings(
        String port, String elasticsearchUrl, String elasticsearchTimeoutMs, String logLevel, String tracesExporter) {
    Settings {
        config(port, elasticsearchUrl, elasticsearchTimeoutMs, logLevel, tracesExporter);
    }

    /** The validated configuration. */
    Config config() {
        return config(port, elasticsearchUrl, elasticsearchTimeoutMs, logLevel, tracesExporter);
    }

    private static Config config(String port, String url, String timeoutMs, String logLevel, String tracesExporter) {
        Map<String, String> variables = new HashMap<>(); // a variable Boot did not bind stays unset (null)
        variables.put("PORT", port);
        variables.put("ELASTICSEARCH_URL", url);
        variables.put("ELASTICSEARCH_TIMEOUT_MS", timeoutMs);
        variables.put("LOG_LEVEL", logLevel);
        variables.put("OTEL_TRACES_EXPORTER", tracesExporter);
        return Config.load(variables);
    }
}
