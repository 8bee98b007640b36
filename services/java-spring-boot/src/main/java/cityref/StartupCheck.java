package cityref;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * The spec's startup: one round-trip to Elasticsearch ({@code GET /_cluster/health}) once every bean
 * exists and before Tomcat listens (Spring starts the web server after this callback); a failure
 * stops the startup ({@link StartupFailureAnalyzer} logs it, {@code main} exits 1). Then, once
 * listening, the line with the port and the startup phases.
 */
@Component
class StartupCheck implements SmartInitializingSingleton, ApplicationListener<WebServerInitializedEvent> {
    private static final Logger LOG = LoggerFactory.getLogger("cityref");
    /** Upper bound of the startup round-trip to Elasticsearch. */
    private static final int STARTUP_CHECK_MAX_MS = 10_000;

    private final CityRepository repository;
    private final Config config;

    StartupCheck(CityRepository repository, Config config) {
        this.repository = repository;
        this.config = config;
    }

    /** Raised when the round-trip fails: the URL (password redacted) and the cause. */
    static final class ElasticsearchUnreachable extends RuntimeException {
        @java.io.Serial
        private static final long serialVersionUID = 1L;

        ElasticsearchUnreachable(String url, Throwable cause) {
            super("Elasticsearch is not reachable at " + url + " (GET /_cluster/health): "
                    + CityRepository.describe(cause));
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        StartupPhases.time("health_check", () -> {
            try {
                repository.checkHealth(STARTUP_CHECK_MAX_MS);
            } catch (Exception e) {
                throw new ElasticsearchUnreachable(config.redactedElasticsearchUrl(), e);
            }
            return null;
        });
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        int port = event.getWebServer().getPort();
        var line = LOG.atInfo().setMessage("listening on port " + port);
        for (var field : StartupPhases.listening()) {
            line = line.addKeyValue(field.getKey(), field.getValue());
        }
        line.addKeyValue("port", port)
                .addKeyValue("available_processors", Runtime.getRuntime().availableProcessors())
                .addKeyValue("elasticsearch_url", config.redactedElasticsearchUrl())
                .log();
    }
}
