package cityref;

import io.helidon.logging.common.LogConfig;
import io.helidon.webserver.WebServer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;
import tools.jackson.databind.node.ObjectNode;

/** Configuration, tracing when on, the startup check, the server, signal handling. */
public final class Main {
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);
    /** The repository's warnings (java-shared's CityRepository logs through its caller). */
    private static final Logger BACKEND_LOG = LoggerFactory.getLogger(CityRepository.class);

    /** Upper bound of the startup round-trip to Elasticsearch. */
    private static final int STARTUP_CHECK_MAX_MS = 10_000;

    private Main() {}

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("healthcheck")) {
            System.exit(HealthCheck.run());
        }
        StartupPhases phases = new StartupPhases();
        try {
            run(phases);
        } catch (Throwable e) {
            // Never linger half-started: the Elasticsearch client's threads would keep the JVM alive.
            LOG.error("startup failed", e);
            System.exit(1);
        }
    }

    private static void run(StartupPhases phases) throws Exception {
        long configStart = System.nanoTime();
        LogConfig.configureRuntime(); // logging.properties: the JDK logging to SLF4J (logback.xml, LOG_LEVEL)
        Config config;
        try {
            config = Config.load(System.getenv());
        } catch (Config.ConfigException e) {
            LOG.atError().addKeyValue("variable", e.variable()).log("invalid configuration: " + e.getMessage());
            System.exit(1);
            return;
        }
        phases.record("config", configStart);
        // Tracing only with OTEL_TRACES_EXPORTER=otlp (the spec's default is off): the SDK from the
        // OTEL_* variables, the server's spans (Tracing) and the Elasticsearch client's.
        OpenTelemetrySdk openTelemetry = config.tracing() ? Tracing.sdk() : null;
        Tracing tracing = openTelemetry == null ? null : new Tracing(openTelemetry);
        // The spec's startup check off the main thread: the Elasticsearch client, then its one
        // round-trip, while this thread builds the server. The spec only requires the round-trip
        // before listening, so the server starts after the check's result. After a failed check
        // the service exits, so the client is left as it is. (Logging is configured first: the
        // check's thread may log.)
        FutureTask<Checked> startupCheck = new FutureTask<>(() -> {
            CityRepository repository = phases.time(
                    "elasticsearch_client",
                    () -> new CityRepository(
                            config,
                            (message, field, value) -> BACKEND_LOG
                                    .atWarn()
                                    .addKeyValue(field, value)
                                    .log(message),
                            openTelemetry));
            try {
                phases.time("health_check", () -> {
                    repository.checkHealth(STARTUP_CHECK_MAX_MS);
                    return null;
                });
                return new Checked(repository, null);
            } catch (Exception e) {
                return new Checked(repository, e);
            }
        });
        Thread.ofPlatform().name("startup-check").start(startupCheck);

        long serverStart = System.nanoTime();
        Telemetry telemetry = new Telemetry();
        DeferredLookup lookup = new DeferredLookup();
        WebServer server = Transport.server(WebServer.builder(), telemetry, tracing)
                .host("0.0.0.0")
                .port(config.port())
                .routing(routing -> Transport.routing(routing, new CityService(lookup), telemetry, tracing))
                .build();
        phases.record("server", serverStart);

        Checked check;
        try {
            check = startupCheck.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e; // the client could not be built
        }
        if (check.failure() != null) {
            LOG.atError()
                    .addKeyValue("url", config.redactedElasticsearchUrl())
                    .addKeyValue("error", AppError.describe(check.failure()))
                    .log("Elasticsearch is not reachable at " + config.redactedElasticsearchUrl()
                            + " (GET /_cluster/health)");
            System.exit(1);
            return;
        }
        CityRepository backend = check.repository();
        lookup.set(backend);

        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            LOG.atInfo().addKeyValue("in_flight", telemetry.inFlight()).log("shutting down");
            server.stop(); // stops accepting, lets requests in flight finish (up to Transport.SHUTDOWN_GRACE)
            try {
                backend.close();
            } catch (Exception e) {
                LOG.warn("closing the Elasticsearch client failed", e);
            }
            if (openTelemetry != null) {
                Tracing.shutdown(openTelemetry); // the spans of the last requests are exported
            }
            stopped.countDown();
        };
        ShutdownSignals.onTermOrInt(() -> Thread.ofPlatform().name("shutdown").start(stop));

        long serverListen = System.nanoTime();
        server.start();
        if (!server.isRunning()) { // e.g. the port is taken: Helidon logs why and returns, not listening
            LOG.atError().addKeyValue("port", config.port()).log("could not listen on port " + config.port());
            backend.close();
            System.exit(1);
            return;
        }
        phases.record("server", serverListen);
        LoggingEventBuilder listening = LOG.atInfo();
        phases.fields().forEach(listening::addKeyValue);
        listening
                .addKeyValue("port", server.port())
                .addKeyValue("available_processors", Runtime.getRuntime().availableProcessors())
                .addKeyValue("elasticsearch_url", config.redactedElasticsearchUrl())
                .log("listening on port " + server.port());
        stopped.await();
        LOG.info("stopped");
        System.exit(0);
    }

    /** The startup check's outcome: the client, and the round-trip's failure (null when it succeeded). */
    private record Checked(CityRepository repository, Exception failure) {}

    /**
     * The routing's lookup, built before the startup check has its client: set once, before the
     * server listens, so every request sees the repository.
     */
    private static final class DeferredLookup implements CityLookup {
        private volatile CityLookup target;

        void set(CityLookup lookup) {
            target = lookup;
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
}
