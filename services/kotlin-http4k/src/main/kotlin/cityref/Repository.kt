package cityref

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient
import co.elastic.clients.elasticsearch.core.GetRequest
import co.elastic.clients.json.jackson.JacksonJsonpMapper
import co.elastic.clients.transport.rest_client.RestClientTransport
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.http.HttpHost
import org.apache.http.impl.nio.reactor.IOReactorConfig
import org.apache.http.message.BasicHeader
import org.elasticsearch.client.RestClient
import org.slf4j.LoggerFactory
import java.io.InterruptedIOException
import java.util.Base64
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ExecutionException
import java.util.concurrent.Semaphore
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** A document's `_source`: GoOut's flat dotted keys (`"name.en"`). */
typealias Source = ObjectNode

/** What the handler needs from the backend (the [Repository], or a fake in tests). */
interface CityLookup {
    fun findCity(
        id: Long,
        language: String,
    ): Source?

    fun findRegion(id: Long): Source?
}

private const val CITY_ALIAS = "city"
private const val REGION_ALIAS = "region"

/** A region is cached for every language, so all its names are fetched (never `geometry`). */
private val REGION_FIELDS = listOf("name.cs", "name.de", "name.en", "name.pl", "name.sk")

/** Pooled connections to Elasticsearch and permits for requests in flight, the spec's bound; sized by measurement (README.md). */
private const val MAX_CONNECTIONS = 64

/**
 * Elasticsearch through the official Java client's async API, waited for on the request's own
 * (virtual) thread, thread-per-request like http4k itself, so that one deadline covers the whole
 * request: ELASTICSEARCH_TIMEOUT_MS, the wait for a pooled connection included (the spec).
 * Cities are never cached; regions that were found are, for the life of the process.
 */
class Repository(
    config: Config,
) : CityLookup,
    AutoCloseable {
    private val log = LoggerFactory.getLogger(Repository::class.java)
    private val timeoutMs = config.elasticsearchTimeoutMs.toInt()
    private val regions = ConcurrentHashMap<Long, Source>()

    /**
     * A request waits here, inside its deadline, rather than in the client's connection pool: a
     * lease request the pool holds survives the cancel at the deadline and is later sent on a new
     * connection, so a burst beyond the bound would open a connection for every abandoned request.
     */
    private val inFlight = Semaphore(MAX_CONNECTIONS)

    private val restClient: RestClient =
        RestClient
            .builder(
                HttpHost(
                    config.elasticsearchUrl.host,
                    config.elasticsearchUrl.port.takeIf { it > 0 }
                        ?: if (config.elasticsearchUrl.scheme == "https") 443 else 80,
                    config.elasticsearchUrl.scheme,
                ),
            ).apply {
                config.elasticsearchUrl.rawPath
                    ?.trimEnd('/')
                    ?.takeIf { it.isNotEmpty() }
                    ?.let(::setPathPrefix)
                // Basic auth sent preemptively (a credentials provider would wait for a 401 first).
                if (config.username != null) {
                    val token = Base64.getEncoder().encodeToString("${config.username}:${config.password ?: ""}".toByteArray())
                    setDefaultHeaders(arrayOf(BasicHeader("Authorization", "Basic $token")))
                }
                // The deadline in [await] decides 504; the client's connect and socket timeouts only back
                // it up. No lease timeout: the wait for a pooled connection is inside that deadline, and a
                // lease timeout would race it and answer 503.
                setRequestConfigCallback { it.setConnectTimeout(timeoutMs).setSocketTimeout(timeoutMs) }
                // As the client's maintainers advise for a hot path without credentials: no auth cache (its
                // BasicAuthCache deserialises the scheme on every request), no cookie store, no system
                // properties (proxy and credential lookups). The I/O reactor checks timeouts once per select
                // interval, by default every 1 s: check every 100 ms.
                setHttpClientConfigCallback {
                    it
                        .setMaxConnPerRoute(MAX_CONNECTIONS)
                        .setMaxConnTotal(MAX_CONNECTIONS)
                        .disableAuthCaching()
                        .disableCookieManagement()
                        .setDefaultIOReactorConfig(IOReactorConfig.custom().setSelectInterval(100).build())
                }
            }.build()

    private val client = ElasticsearchAsyncClient(RestClientTransport(restClient, JacksonJsonpMapper()))

    /** The startup round-trip: `GET /_cluster/health`. Throws on failure. */
    fun checkHealth() {
        await(client.cluster().health(), "GET /_cluster/health")
    }

    /** The city's scalar fields and its name in [language]; null for a plain not-found. */
    override fun findCity(
        id: Long,
        language: String,
    ): Source? = getSource(CITY_ALIAS, id, listOf("id", "countryIso", "isFeatured", "regionId", "name.$language"))

    /** The region's names, from the cache or else from Elasticsearch (only found regions are kept). */
    override fun findRegion(id: Long): Source? = regions[id] ?: getSource(REGION_ALIAS, id, REGION_FIELDS)?.also { regions[id] = it }

    /**
     * `GET /<alias>/_doc/<id>?_source_includes=<fields>`: the `_source` of a found document, null
     * for a plain not-found (`"found":false`), [AppError.Timeout] when there is no answer in
     * time, [AppError.Unavailable] for anything else (refused, reset, 429/5xx, an error body, an
     * answer that is not a document or lacks the `X-Elastic-Product` header).
     */
    private fun getSource(
        alias: String,
        id: Long,
        fields: List<String>,
    ): Source? {
        val request = GetRequest.of { it.index(alias).id(id.toString()).sourceIncludes(fields) }
        val response =
            try {
                call("GET /$alias/_doc/$id") { client.get(request, ObjectNode::class.java) }
            } catch (e: AppError) {
                throw e
            } catch (e: Exception) {
                if (e.causes().any { it is InterruptedIOException }) { // the client's own timeouts, as a backup
                    log.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: GET /{}/_doc/{}", alias, id)
                    throw AppError.Timeout
                }
                log.atWarn().addKeyValue("error", describe(e)).log("Elasticsearch unavailable: GET /{}/_doc/{}", alias, id)
                throw AppError.Unavailable
            }
        if (!response.found()) return null
        return response.source() ?: run {
            log.warn("Elasticsearch answered GET /{}/_doc/{} with a document without _source", alias, id)
            throw AppError.Unavailable
        }
    }

    /**
     * The answer of [request], sent once a permit is free, within one deadline for both the wait
     * and the exchange (the spec); [AppError.Timeout] without one.
     */
    private fun <T> call(
        what: String,
        request: () -> CompletableFuture<T>,
    ): T {
        val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs.toLong())
        if (!inFlight.tryAcquire(timeoutMs.toLong(), TimeUnit.MILLISECONDS)) {
            log.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: {}", what)
            throw AppError.Timeout
        }
        try {
            return await(request(), what, deadline - System.nanoTime())
        } finally {
            inFlight.release()
        }
    }

    /** The answer within [nanos]; [AppError.Timeout] without one (the request is cancelled). */
    private fun <T> await(
        future: CompletableFuture<T>,
        what: String,
        nanos: Long = TimeUnit.MILLISECONDS.toNanos(timeoutMs.toLong()),
    ): T =
        try {
            future.get(nanos, TimeUnit.NANOSECONDS)
        } catch (e: TimeoutException) {
            future.cancel(true)
            log.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: {}", what)
            throw AppError.Timeout
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: InterruptedException) {
            future.cancel(true)
            throw e
        }

    override fun close() = restClient.close()
}

private fun Throwable.causes(): Sequence<Throwable> = generateSequence(this) { it.cause.takeIf { c -> c !== it } }.take(10)

/** An exception and its causes, each text once. */
fun describe(e: Throwable): String =
    e
        .causes()
        .map { t -> t.message?.let { "${t.javaClass.simpleName}: $it" } ?: t.javaClass.simpleName }
        .distinct()
        .joinToString(" <- ")
