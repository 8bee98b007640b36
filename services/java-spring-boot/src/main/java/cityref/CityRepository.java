package cityref;

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient;
import co.elastic.clients.elasticsearch.core.GetResponse;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.http.conn.ConnectTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Repository;
import tools.jackson.databind.node.ObjectNode;

/**
 * Elasticsearch through the official Java client's async API, awaited on the request's virtual
 * thread (Tomcat runs each request on its own), so plain sequential code is enough and one deadline
 * covers the whole request: ELASTICSEARCH_TIMEOUT_MS, the wait for a pooled connection included
 * (the spec). Cities are never cached; regions that were found are, for the life of the process.
 */
@Repository
public class CityRepository implements CityLookup {
    private static final Logger LOG = LoggerFactory.getLogger(CityRepository.class);
    private static final String CITY_ALIAS = "city";
    private static final String REGION_ALIAS = "region";
    /** A region is cached for every language, so all its names are fetched (never geometry). */
    private static final List<String> REGION_FIELDS = List.of("name.cs", "name.de", "name.en", "name.pl", "name.sk");

    private final ElasticsearchAsyncClient client;
    private final long timeoutMs;
    private final Map<Long, ObjectNode> regions = new ConcurrentHashMap<>();
    /**
     * A request waits here, inside its deadline, rather than in the client's connection pool: a
     * lease request the pool holds survives the cancel at the deadline and is later sent on a new
     * connection, so a burst beyond the bound would open a connection for every abandoned request.
     */
    private final Semaphore inFlight = new Semaphore(ElasticsearchConfiguration.MAX_CONNECTIONS);

    public CityRepository(ElasticsearchAsyncClient client, Config config) {
        this.client = client;
        this.timeoutMs = config.elasticsearchTimeoutMs();
    }

    /** The startup round-trip, {@code GET /_cluster/health}, within ELASTICSEARCH_TIMEOUT_MS or {@code maxMs}. */
    public void checkHealth(long maxMs) throws Exception {
        long ms = Math.min(timeoutMs, maxMs);
        await(client.cluster().health(), TimeUnit.MILLISECONDS.toNanos(ms), "GET /_cluster/health");
    }

    @Override
    public ObjectNode findCity(long id, String language) {
        return getSource(CITY_ALIAS, id, List.of("id", "countryIso", "isFeatured", "regionId", "name." + language));
    }

    @Override
    public ObjectNode findRegion(long id) {
        ObjectNode cached = regions.get(id);
        if (cached != null) {
            return cached;
        }
        ObjectNode region = getSource(REGION_ALIAS, id, REGION_FIELDS);
        if (region != null) {
            regions.put(id, region);
        }
        return region;
    }

    /**
     * {@code GET /<alias>/_doc/<id>?_source_includes=<fields>}: the {@code _source} of a found
     * document, null for a plain not-found ({@code "found":false}), a 504 {@link AppError} when
     * there is no answer in time, a 503 for anything else (refused, reset, 429/5xx, an error body,
     * an answer that is not a document or lacks the X-Elastic-Product header).
     */
    private ObjectNode getSource(String alias, long id, List<String> fields) {
        String what = "GET /" + alias + "/_doc/" + id;
        GetResponse<ObjectNode> response;
        try {
            response = call(
                    () -> client.get(
                            g -> g.index(alias).id(Long.toString(id)).sourceIncludes(fields), ObjectNode.class),
                    what);
        } catch (AppError e) {
            throw e;
        } catch (Exception e) {
            throw backendFailure(what, e);
        }
        if (!response.found()) {
            return null;
        }
        if (response.source() == null) {
            LOG.warn("Elasticsearch answered {} with a document without _source", what);
            throw AppError.unavailable();
        }
        return response.source();
    }

    /**
     * The answer of {@code request}, sent once a permit is free, within one deadline for both the
     * wait and the exchange (the spec); a 504 {@link AppError} without one.
     */
    private <T> T call(Supplier<CompletableFuture<T>> request, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        if (!inFlight.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS)) {
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
        LOG.atWarn()
                .setMessage("Elasticsearch timed out: " + what)
                .addKeyValue("timeout_ms", timeoutMs)
                .log();
        return AppError.timeout();
    }

    private static AppError backendFailure(String what, Exception e) {
        boolean timedOut = false;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SocketTimeoutException || t instanceof ConnectTimeoutException) {
                timedOut = true;
                break;
            }
        }
        LOG.atWarn()
                .setMessage(timedOut ? "Elasticsearch timed out: " + what : "Elasticsearch unavailable: " + what)
                .addKeyValue("error", describe(e))
                .log();
        return timedOut ? AppError.timeout() : AppError.unavailable();
    }

    /** An exception as one line: its class and message, then its causes'. */
    static String describe(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (!out.isEmpty()) {
                out.append(": ");
            }
            out.append(t.getClass().getName());
            if (t.getMessage() != null) {
                out.append(" (").append(t.getMessage()).append(')');
            }
        }
        return out.toString();
    }
}
