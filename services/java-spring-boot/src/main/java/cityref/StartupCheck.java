package cityref;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * The spec's startup: one round-trip to Elasticsearch ({@code GET /_cluster/health}) once every bean
 * exists and before Tomcat listens (Spring starts the web server after this callback), waiting at
 * most until 10 s after launch (at least 1 s, at most ELASTICSEARCH_TIMEOUT_MS); a failure
 * stops the startup ({@link StartupFailureAnalyzer} logs it, {@code main} exits 1). Then, once
 * listening, the line with the port and the startup phases.
 */
@Component
class StartupCheck implements SmartInitializingSingleton, ApplicationListener<WebServerInitializedEvent> {
    private static final Logger LOG = LoggerFactory.getLogger("cityref");
    /**
     * The spec's bound on the startup round-trip to Elasticsearch, counted from launch (from
     * {@code main()}): the context is built first, which takes seconds on a cold machine, and an
     * unreachable Elasticsearch must still end the process about 10 s after launch.
     */
    private static final long STARTUP_CHECK_MAX_MS = 10_000;
    /** However late the context is ready, the round-trip gets at least this long (or ELASTICSEARCH_TIMEOUT_MS). */
    private static final long STARTUP_CHECK_MIN_MS = 1_000;

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
            super("Elasticsearch is not reachable at " + url + " (GET /_cluster/health): " + cause, cause);
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        StartupPhases.time("health_check", () -> {
            try {
                repository.checkHealth(
                        Math.max(STARTUP_CHECK_MAX_MS - StartupPhases.sinceMainMs(), STARTUP_CHECK_MIN_MS));
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
