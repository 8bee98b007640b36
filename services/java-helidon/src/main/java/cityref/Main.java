package cityref;

import io.helidon.logging.common.LogConfig;
import io.helidon.webserver.WebServer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/** Startup and wiring: configuration, tracing when on, the startup check, the server, the stop on a signal. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("healthcheck")) {
            System.exit(HealthCheck.run()); // before any logging: the check's JVM loads almost nothing
        }
        StartupPhases phases = new StartupPhases();
        LogConfig.configureRuntime(); // logging.properties: the JDK logging to SLF4J (logback.xml, LOG_LEVEL)
        Logger log = LoggerFactory.getLogger(Main.class);
        try {
            System.exit(run(phases, log));
        } catch (Throwable e) {
            // Never linger half-started: the Elasticsearch client's threads would keep the JVM alive.
            log.error("startup failed", e);
            System.exit(1);
        }
    }

    private static int run(StartupPhases phases, Logger log) throws Exception {
        long configStart = System.nanoTime();
        // Helidon's Config (the environment, then application.yaml); the spec's variables validated on top.
        io.helidon.config.Config helidon = io.helidon.config.Config.create();
        Config config;
        try {
            config = Config.load(name -> helidon.get(name).asString().orElse(null));
        } catch (Config.ConfigException e) {
            log.atError().addKeyValue("variable", e.variable()).log("invalid configuration: " + e.getMessage());
            return 1;
        }
        phases.record("config", configStart);
        OpenTelemetrySdk openTelemetry = config.tracing() ? Tracing.sdk() : null;
        Tracing tracing = openTelemetry == null ? null : new Tracing(openTelemetry);
        StartupCheck check = StartupCheck.start(config, openTelemetry, phases); // while the server is built

        long serverStart = System.nanoTime();
        Telemetry telemetry = new Telemetry();
        WebServer server = Transport.server(WebServer.builder(), helidon.get("server"), telemetry, tracing)
                .port(config.port())
                .routing(routing -> Transport.routing(routing, new CityService(check), telemetry, tracing))
                .build();
        phases.record("server", serverStart);
        CityRepository backend = check.await(log, config);
        if (backend == null) {
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        ShutdownSignals.onTermOrInt(() -> Thread.ofPlatform().name("shutdown").start(() -> {
            log.atInfo().addKeyValue("in_flight", telemetry.inFlight()).log("shutting down");
            server.stop(); // stops accepting, lets requests in flight finish (shutdown-grace-period)
            try {
                backend.close();
            } catch (Exception e) {
                log.warn("closing the Elasticsearch client failed", e);
            }
            if (openTelemetry != null) {
                Tracing.shutdown(openTelemetry); // the spans of the last requests are exported
            }
            stopped.countDown();
        }));

        long serverListen = System.nanoTime();
        server.start();
        if (!server.isRunning()) { // e.g. the port is taken: Helidon logs why and returns, not listening
            log.atError().addKeyValue("port", config.port()).log("could not listen on port " + config.port());
            return 1;
        }
        phases.record("server", serverListen);
        LoggingEventBuilder listening = log.atInfo();
        phases.fields().forEach(listening::addKeyValue);
        listening
                .addKeyValue("port", server.port())
                .addKeyValue("available_processors", Runtime.getRuntime().availableProcessors())
                .addKeyValue("elasticsearch_url", config.redactedElasticsearchUrl())
                .log("listening on port " + server.port());
        stopped.await();
        log.info("stopped");
        return 0;
    }
}
