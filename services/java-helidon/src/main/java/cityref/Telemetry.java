package cityref;

import io.helidon.http.HttpPrologue;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per request, once it is answered: one {@code info} log line and one observation of the
 * {@code http_server_request_duration_seconds} histogram; also counts requests in flight.
 */
public final class Telemetry implements Filter {
    /** Prometheus text format 0.0.4. */
    public static final String METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Methods of RFC 9110 plus PATCH; any other is counted as {@code _OTHER}. */
    private static final Set<String> KNOWN_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH");

    /** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
    private static final int MAX_LOGGED_TARGET = 8192;
    /** The request context's key for the listed path a request matched (see {@link #matched}). */
    private static final String ROUTE = "cityref.route";

    private static final double[] BUCKETS = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10};
    private static final Logger REQUEST_LOG = LoggerFactory.getLogger("cityref.request");

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Duration[] slos = Arrays.stream(BUCKETS)
            .mapToObj(s -> Duration.ofNanos((long) (s * 1e9)))
            .toArray(Duration[]::new);
    private final AtomicInteger inFlight = new AtomicInteger();

    /** Requests received and not yet answered. */
    public int inFlight() {
        return inFlight.get();
    }

    /** The Prometheus text exposition of the registry. */
    public String scrape() {
        return registry.scrape();
    }

    /** One observation of {@code http.server.request.duration} (OpenTelemetry's name). */
    public void record(String method, String route, int status, long nanos) {
        Labels labels = new Labels(KNOWN_METHODS.contains(method) ? method : "_OTHER", route, status);
        timers.computeIfAbsent(
                        labels,
                        l -> Timer.builder("http.server.request.duration")
                                .description("Duration of HTTP server requests.")
                                .tags(
                                        "http_request_method", l.method(),
                                        "http_route", l.route(),
                                        "http_response_status_code", Integer.toString(l.status()))
                                .serviceLevelObjectives(slos)
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** One timer per label set, registered once (a builder per request costs an id and a lookup). */
    private final Map<Labels, Timer> timers = new ConcurrentHashMap<>();

    private record Labels(String method, String route, int status) {}

    /**
     * The request target as sent on the request line, rebuilt from Helidon's raw path, query and
     * fragment. Helidon keeps no trace of an empty query, so {@code /health?} comes back as {@code /health}.
     */
    public static String target(HttpPrologue prologue) {
        StringBuilder target = new StringBuilder(prologue.uriPath().rawPath());
        if (!prologue.query().rawValue().isEmpty()) {
            target.append('?').append(prologue.query().rawValue());
        }
        if (prologue.fragment().hasValue()) {
            target.append('#').append(prologue.fragment().rawValue());
        }
        return target.toString();
    }

    /**
     * The transport's word that {@code req} matched the listed path {@code route}: its {@code http_route}
     * label. A request without it (an unknown path, a 414) is counted with the empty route.
     */
    public static void matched(ServerRequest req, String route) {
        req.context().register(ROUTE, route);
    }

    /** The listed path {@code req} matched ({@link #matched}), if any. */
    public static Optional<String> route(ServerRequest req) {
        return req.context().get(ROUTE, String.class);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        inFlight.incrementAndGet();
        // Observed just before the response is sent, so that a /metrics read made after a
        // response always counts it; a response never sent (the handler failed) counts as 500.
        AtomicBoolean observed = new AtomicBoolean();
        res.beforeSend(() -> {
            if (observed.compareAndSet(false, true)) {
                observe(req, res.status().code(), System.nanoTime() - start);
            }
        });
        try {
            chain.proceed();
        } finally {
            inFlight.decrementAndGet();
            if (observed.compareAndSet(false, true)) {
                observe(req, 500, System.nanoTime() - start);
            }
        }
    }

    /**
     * Logs and counts a request Helidon rejected before routing (method and target as far as it read
     * them; no route matched).
     */
    public void observeRejected(String method, String target, int status) {
        observe(method, target, "", status, 0);
    }

    private void observe(ServerRequest req, int status, long nanos) {
        String route = route(req).orElse("");
        observe(req.prologue().method().text(), target(req.prologue()), route, status, nanos);
    }

    private void observe(String method, String target, String route, int status, long nanos) {
        record(method, route, status, nanos);
        REQUEST_LOG
                .atInfo()
                .addKeyValue("method", method)
                .addKeyValue(
                        "path", target.length() > MAX_LOGGED_TARGET ? target.substring(0, MAX_LOGGED_TARGET) : target)
                .addKeyValue("status", status)
                .addKeyValue("duration_ms", nanos / 1e6)
                .log("request");
    }
}
