package cityref;

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient;
import co.elastic.clients.elasticsearch.core.GetResponse;
import co.elastic.clients.json.jackson.Jackson3JsonpMapper;
import co.elastic.clients.transport.instrumentation.Instrumentation;
import co.elastic.clients.transport.instrumentation.NoopInstrumentation;
import co.elastic.clients.transport.instrumentation.OpenTelemetryForElasticsearch;
import co.elastic.clients.transport.rest_client.RestClientTransport;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.http.HttpHost;
import org.apache.http.conn.ConnectTimeoutException;
import org.apache.http.impl.nio.reactor.IOReactorConfig;
import org.apache.http.message.BasicHeader;
import org.elasticsearch.client.RestClient;
import org.elasticsearch.client.RestClientBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Elasticsearch through the official Java client's async API (its default Jackson 3 mapper),
 * awaited on the request's virtual thread (Helidon and Tomcat both run each request on its own), so
 * plain sequential code is enough and one deadline covers the whole request:
 * ELASTICSEARCH_TIMEOUT_MS, the wait for a pooled connection included (the spec). Cities are never
 * cached; regions that were found are, for the life of the process. Its warnings go through SLF4J,
 * which both services log through (logback in Helidon, Spring Boot's logging in Spring).
 *
 * <p>Tracing (the spec's "Tracing", on only when the service passes an {@link OpenTelemetry}): the
 * client's own instrumentation, {@link OpenTelemetryForElasticsearch}, given that instance, makes one
 * CLIENT span per request, a child of the current (server) span; it sends no {@code traceparent}, so
 * each request carries the current context through the instance's propagator, as per-request
 * transport options (the client's documented way to add a header to one request). Its parent is
 * therefore the server span: the client span is current only inside the transport, after the
 * request's options are fixed. Without an instance the client is the untraced one: the client's
 * {@link NoopInstrumentation} (what the transport ends up with by itself when no OpenTelemetry is
 * installed), no header.
 */
public final class CityRepository implements CityLookup, AutoCloseable {
    /**
     * Pooled connections to Elasticsearch and permits for requests in flight, the spec's bound (the
     * low-level client's default is 10 connections per route); sized by measurement (README.md).
     */
    static final int MAX_CONNECTIONS = 64;

    private static final Logger LOG = LoggerFactory.getLogger(CityRepository.class);
    private static final String CITY_ALIAS = "city";
    private static final String REGION_ALIAS = "region";
    /** A region is cached for every language, so all its names are fetched (never geometry). */
    private static final List<String> REGION_FIELDS = List.of("name.cs", "name.de", "name.en", "name.pl", "name.sk");

    private final RestClient restClient;
    private final ElasticsearchAsyncClient client;
    /** The propagator that writes {@code traceparent} into each request; null when tracing is off. */
    private final TextMapPropagator propagator;
    private final long timeoutMs;
    private final LongSupplier arrival;
    private final Map<Long, ObjectNode> regions = new ConcurrentHashMap<>();
    /**
     * A request waits here, inside its deadline, rather than in the client's connection pool: a
     * lease request the pool holds survives the cancel at the deadline and is later sent on a new
     * connection, so a burst beyond the bound would open a connection for every abandoned request.
     */
    private final Semaphore inFlight = new Semaphore(MAX_CONNECTIONS);

    /**
     * The client for {@code config}; {@code openTelemetry} traces its requests, null (tracing off)
     * leaves the client untraced. {@code arrival} is when the current request arrived
     * ({@link System#nanoTime()} units): the city's deadline runs from it (the spec: the wait for a
     * thread to run the request on is included); {@code System::nanoTime} where the server queues none.
     */
    public CityRepository(Config config, OpenTelemetry openTelemetry, LongSupplier arrival) {
        int timeout = config.elasticsearchTimeoutMs();
        var url = config.elasticsearchUrl();
        int port = url.getPort() > 0 ? url.getPort() : ("https".equals(url.getScheme()) ? 443 : 80);
        RestClientBuilder builder = RestClient.builder(new HttpHost(url.getHost(), port, url.getScheme()));
        String path = url.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            builder.setPathPrefix(path.replaceAll("/+$", ""));
        }
        if (config.username() != null) {
            // Basic auth sent preemptively (a credentials provider would wait for a 401 first).
            String secret = config.username() + ":" + (config.password() == null ? "" : config.password());
            String token = Base64.getEncoder().encodeToString(secret.getBytes(StandardCharsets.UTF_8));
            builder.setDefaultHeaders(new BasicHeader[] {new BasicHeader("Authorization", "Basic " + token)});
        }
        // The deadline in await() decides 504; the client's connect and socket timeouts only back
        // it up. No lease timeout: the wait for a pooled connection is inside that deadline, and a
        // lease timeout would race it and answer 503.
        builder.setRequestConfigCallback(rc -> rc.setConnectTimeout(timeout).setSocketTimeout(timeout));
        // As the client's maintainers advise for a hot path without credentials: no auth cache (its
        // BasicAuthCache deserialises the scheme on every request) and no cookie store. The I/O
        // reactor checks timeouts once per select interval, by default every 1 s: check every 100 ms.
        builder.setHttpClientConfigCallback(hc -> hc.setMaxConnPerRoute(MAX_CONNECTIONS)
                .setMaxConnTotal(MAX_CONNECTIONS)
                .disableAuthCaching()
                .disableCookieManagement()
                .setDefaultIOReactorConfig(
                        IOReactorConfig.custom().setSelectInterval(100).build()));
        this.restClient = builder.build();
        // Without tracing, the client's no-op instrumentation, named: left to choose, the transport asks
        // GlobalOpenTelemetry, which finds none (so the same no-op) but logs a line about the SDK's
        // autoconfigure module on the classpath.
        Instrumentation instrumentation = openTelemetry == null
                ? NoopInstrumentation.INSTANCE
                : new OpenTelemetryForElasticsearch(openTelemetry, false);
        this.client = new ElasticsearchAsyncClient(
                new RestClientTransport(restClient, new Jackson3JsonpMapper(), null, instrumentation));
        this.propagator = openTelemetry == null
                ? null
                : openTelemetry.getPropagators().getTextMapPropagator();
        this.timeoutMs = timeout;
        this.arrival = arrival;
    }

    /** The startup round-trip, {@code GET /_cluster/health}, within ELASTICSEARCH_TIMEOUT_MS or {@code maxMs}. */
    public void checkHealth(long maxMs) throws Exception {
        long ms = Math.min(timeoutMs, maxMs);
        await(client().cluster().health(), TimeUnit.MILLISECONDS.toNanos(ms), "GET /_cluster/health");
    }

    /** Its deadline runs from the request's arrival: the city is what the request needs first. */
    @Override
    public ObjectNode findCity(long id, String language) {
        var fields = List.of("id", "countryIso", "isFeatured", "regionId", "name." + language);
        return getSource(CITY_ALIAS, id, fields, arrival.getAsLong());
    }

    /** Its deadline runs from now, when the city's answer shows the region is needed. */
    @Override
    public ObjectNode findRegion(long id) {
        ObjectNode cached = regions.get(id);
        if (cached != null) {
            return cached;
        }
        ObjectNode region = getSource(REGION_ALIAS, id, REGION_FIELDS, System.nanoTime());
        if (region != null) {
            regions.put(id, region);
        }
        return region;
    }

    /**
     * {@code GET /<alias>/_doc/<id>?_source_includes=<fields>}: the {@code _source} of a found
     * document, null for a plain not-found ({@code "found":false}), a 504 {@link AppError} when
     * there is no answer in time, a 503 for anything else (refused, reset, 429/5xx, an error body,
     * an answer that is not a document or lacks the X-Elastic-Product header); the deadline is
     * ELASTICSEARCH_TIMEOUT_MS after {@code since} ({@link System#nanoTime()}).
     */
    private ObjectNode getSource(String alias, long id, List<String> fields, long since) {
        String what = "GET /" + alias + "/_doc/" + id;
        GetResponse<ObjectNode> response;
        try {
            response = call(
                    () -> client().get(
                            g -> g.index(alias).id(Long.toString(id)).sourceIncludes(fields), ObjectNode.class),
                    what, since);
        } catch (AppError e) {
            throw e;
        } catch (Exception e) {
            throw backendFailure(what, e);
        }
        if (!response.found()) {
            return null;
        }
        if (response.source() == null) {
            LOG.atWarn().addKeyValue("index", alias).log("Elasticsearch answered " + what + " with a document without _source");
            throw AppError.unavailable();
        }
        return response.source();
    }

    /**
     * The client for one request: with tracing on, one whose requests carry the current context
     * ({@code traceparent}, and {@code tracestate} or {@code baggage} when there are any).
     */
    private ElasticsearchAsyncClient client() {
        if (propagator == null) {
            return client;
        }
        return client.withTransportOptions(options -> {
            propagator.inject(Context.current(), options, (o, name, value) -> o.setHeader(name, value));
            return options;
        });
    }

    /**
     * The answer of {@code request}, sent once a permit is free, within one deadline for both the
     * wait and the exchange, ELASTICSEARCH_TIMEOUT_MS after {@code since} (the spec); a 504
     * {@link AppError} without one.
     */
    private <T> T call(Supplier<CompletableFuture<T>> request, String what, long since) throws Exception {
        long deadline = since + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        if (!inFlight.tryAcquire(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
            throw timedOut(what);
        }
        try {
            return await(request.get(), deadline - System.nanoTime(), what);
        } finally {
            inFlight.release();
        }
    }

    /** The answer within {@code nanos}; a 504 {@link AppError} without one (the request is cancelled). */
    private <T> T await(CompletableFuture<T> future, long nanos, String what) throws Exception {
        try {
            return future.get(nanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw timedOut(what);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw e;
        }
    }

    private AppError timedOut(String what) {
        LOG.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: " + what);
        return AppError.timeout();
    }

    /** A failure's warning carries it and its causes, as the logger writes a failure (the spec). */
    private AppError backendFailure(String what, Exception e) {
        boolean timedOut = false;
        for (Throwable t = e; t != null && !timedOut; t = t.getCause() == t ? null : t.getCause()) {
            timedOut = t instanceof SocketTimeoutException || t instanceof ConnectTimeoutException;
        }
        LOG.atWarn().setCause(e).log((timedOut ? "Elasticsearch timed out: " : "Elasticsearch unavailable: ") + what);
        return timedOut ? AppError.timeout() : AppError.unavailable();
    }

    @Override
    public void close() throws IOException {
        restClient.close();
    }
}
