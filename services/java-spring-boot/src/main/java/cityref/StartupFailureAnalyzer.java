package cityref;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Spring Boot's report of a failed start for this service's two causes, as one error line naming
 * what is wrong (the spec): an invalid variable, or Elasticsearch unreachable at startup. Registered
 * in META-INF/spring.factories; Spring logs the analysis instead of the stack trace. LOG_LEVEL is
 * also Boot's {@code logging.level.root} (application.properties), which Boot binds before any bean
 * exists: a value it cannot read fails that binding, reported here as the variable, never echoed.
 */
class StartupFailureAnalyzer implements FailureAnalyzer {
    private static final ConfigurationPropertyName ROOT_LEVEL = ConfigurationPropertyName.of("logging.level.root");

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof BindException b && ROOT_LEVEL.equals(b.getName())) {
                t = Config.invalidLogLevel();
            }
            if (t instanceof Config.ConfigException e) {
                return new FailureAnalysis(
                        "invalid configuration: " + e.getMessage(), "Set " + e.variable() + " to a valid value.", e);
            }
            if (t instanceof StartupCheck.ElasticsearchUnreachable e) {
                return new FailureAnalysis(e.getMessage(), "Start Elasticsearch or fix ELASTICSEARCH_URL.", e);
            }
        }
        return null;
    }
}
