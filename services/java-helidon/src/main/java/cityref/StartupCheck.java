package cityref;

import io.opentelemetry.api.OpenTelemetry;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.slf4j.Logger;
import tools.jackson.databind.node.ObjectNode;

/**
 * The spec's startup check off the main thread: the Elasticsearch client, then its one round-trip
 * ({@code GET /_cluster/health}), while the main thread builds the server, which listens only after
 * the result. Also the routing's lookup: the repository, once the check has passed (before the server
 * listens, so every request sees it).
 */
final class StartupCheck implements CityLookup {
    /** Upper bound of the startup round-trip to Elasticsearch. */
    private static final int MAX_MS = 10_000;

    private final FutureTask<CityRepository> repository;
    private volatile Exception failure;
    private volatile CityLookup target;

    private StartupCheck(Config config, OpenTelemetry openTelemetry, StartupPhases phases) {
        repository = new FutureTask<>(() -> {
            CityRepository client = phases.time(
                    "elasticsearch_client", () -> new CityRepository(config, openTelemetry, System::nanoTime));
            try {
                phases.time("health_check", () -> {
                    client.checkHealth(MAX_MS);
                    return null;
                });
            } catch (Exception e) {
                failure = e; // the service exits, so the client is left as it is
            }
            return client;
        });
    }

    static StartupCheck start(Config config, OpenTelemetry openTelemetry, StartupPhases phases) {
        StartupCheck check = new StartupCheck(config, openTelemetry, phases);
        Thread.ofPlatform().name("startup-check").start(check.repository);
        return check;
    }

    /** The repository once the check passed; null after logging why it failed. */
    CityRepository await(Logger log, Config config) throws Exception {
        CityRepository client;
        try {
            client = repository.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e; // the client could not be built
        }
        if (failure != null) {
            String url = config.redactedElasticsearchUrl();
            log.atError()
                    .addKeyValue("url", url)
                    .setCause(failure)
                    .log("Elasticsearch is not reachable at " + url + " (GET /_cluster/health)");
            return null;
        }
        target = client;
        return client;
    }

    @Override
    public ObjectNode findCity(long id, String language) {
        return target.findCity(id, language);
    }

    @Override
    public ObjectNode findRegion(long id) {
        return target.findRegion(id);
    }
}
