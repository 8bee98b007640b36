package cityref

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient
import co.elastic.clients.elasticsearch.core.GetRequest
import co.elastic.clients.elasticsearch.core.GetResponse
import co.elastic.clients.json.jackson.JacksonJsonpMapper
import co.elastic.clients.transport.instrumentation.NoopInstrumentation
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
import java.util.concurrent.TimeUnit

/** A document's `_source`: GoOut's flat dotted keys (`"name.en"`). */
typealias Source = ObjectNode

const val CITY_ALIAS = "city"
const val REGION_ALIAS = "region"

/** A region is cached for every language, so all its names are fetched (never `geometry`). */
val REGION_FIELDS = listOf("name.cs", "name.de", "name.en", "name.pl", "name.sk")

/** What a city lookup fetches: the scalar fields and the name in [language] (never `geometry` or `population`). */
fun cityFields(language: String) = listOf("id", "countryIso", "isFeatured", "regionId", "name.$language")

/**
 * Pooled connections to Elasticsearch and permits for requests in flight, the spec's bound (the
 * low-level client's default is 10 connections per route); sized by measurement (the services' READMEs).
 */
const val MAX_CONNECTIONS = 64

/**
 * The official Java client's async API over its low-level RestClient, built once for both Kotlin
 * services (by the startup check, which makes its first round-trip), and what their repositories
 * share around it: the get-by-id request, the reading of its answer, the mapping of failures to the
 * spec's 503 and 504 with their warning lines, and the region cache. How a repository waits for an
 * answer (a coroutine in Ktor, the request's virtual thread in http4k) and bounds the requests in
 * flight stays in each service's `CityRepository`.
 */
class Elasticsearch(
    config: Config,
    /** Tracing on ([Tracing]): the client's spans and a `traceparent` on each lookup; null: neither. */
    private val tracing: Tracing? = null,
) : AutoCloseable {
    /** `ELASTICSEARCH_TIMEOUT_MS`: the deadline of one request, the wait for a permit included. */
    val timeoutMs: Long = config.elasticsearchTimeoutMs

    private val log = LoggerFactory.getLogger(Elasticsearch::class.java)

    private val restClient: RestClient =
        RestClient
            .builder(HttpHost(config.elasticsearchUrl.host, config.elasticsearchUrl.port, config.elasticsearchUrl.scheme))
            .apply {
                config.elasticsearchUrl.rawPath
                    ?.trimEnd('/')
                    ?.takeIf { it.isNotEmpty() }
                    ?.let(::setPathPrefix)
                // Basic auth sent preemptively (a credentials provider would wait for a 401 first).
                if (config.username != null) {
                    val token = Base64.getEncoder().encodeToString("${config.username}:${config.password ?: ""}".toByteArray())
                    setDefaultHeaders(arrayOf(BasicHeader("Authorization", "Basic $token")))
                }
                // Each repository's deadline decides 504; the client's connect and socket timeouts only back
                // it up. No lease timeout: the wait for a pooled connection is inside that deadline, and a
                // lease timeout would race it and answer 503.
                val timeout = timeoutMs.toInt()
                setRequestConfigCallback { it.setConnectTimeout(timeout).setSocketTimeout(timeout) }
                // As the client's maintainers advise for a hot path without credentials: no auth cache (its
                // BasicAuthCache deserialises the scheme on every request), no cookie store, no system
                // properties (proxy and credential lookups); a bounded pool. The I/O reactor checks timeouts
                // once per select interval, by default every 1 s: check every 100 ms.
                setHttpClientConfigCallback {
                    it
                        .setMaxConnPerRoute(MAX_CONNECTIONS)
                        .setMaxConnTotal(MAX_CONNECTIONS)
                        .disableAuthCaching()
                        .disableCookieManagement()
                        .setDefaultIOReactorConfig(IOReactorConfig.custom().setSelectInterval(100).build())
                }
            }.build()

    /**
     * The transport with its instrumentation given: the client's own OpenTelemetry support with the
     * service's SDK when tracing is on, else none. Left to itself the transport would ask the global
     * OpenTelemetry, a no-op here (no spans, no headers), and that look-up writes a line to stderr
     * once the SDK's autoconfiguration is on the class path.
     */
    internal val client =
        ElasticsearchAsyncClient(
            RestClientTransport(restClient, JacksonJsonpMapper(), null, tracing?.elasticsearch ?: NoopInstrumentation.INSTANCE),
        )

    /** Regions that were found, for the life of the process (cities and missing regions are never cached). */
    @PublishedApi
    internal val regions = ConcurrentHashMap<Long, Source>()

    /**
     * The startup round-trip, `GET /_cluster/health`, waited for at most [timeoutMs] on the caller's
     * thread (the startup check's own). Throws on failure.
     */
    fun checkHealth(timeoutMs: Long) {
        val future = client.cluster().health()
        try {
            future.get(timeoutMs, TimeUnit.MILLISECONDS)
        } finally {
            future.cancel(true) // nothing once answered; else the exchange is aborted
        }
    }

    /** The region [id] from the cache, or else [fetch]ed and kept if found. */
    inline fun region(
        id: Long,
        fetch: () -> Source?,
    ): Source? = regions[id] ?: fetch()?.also { regions[id] = it }

    /**
     * `GET /<alias>/_doc/<id>?_source_includes=<fields>`, sent; with tracing on, from the caller's
     * context: the client's span is its child, and the request carries its `traceparent` (per-request
     * options: the client's instrumentation sends none).
     */
    fun get(
        alias: String,
        id: Long,
        fields: List<String>,
    ): CompletableFuture<GetResponse<Source>> {
        val request = GetRequest.of { it.index(alias).id(id.toString()).sourceIncludes(fields) }
        val traced = tracing?.let { client.withTransportOptions(it::propagate) } ?: client
        return traced.get(request, Source::class.java)
    }

    /**
     * The `_source` of a found document, null for a plain not-found (`"found":false`);
     * [AppError.Unavailable] for a found document without one.
     */
    fun sourceOf(
        what: String,
        response: GetResponse<Source>,
    ): Source? {
        if (!response.found()) return null
        return response.source() ?: run {
            log.warn("Elasticsearch answered {} with a document without _source", what)
            throw AppError.Unavailable
        }
    }

    /** No answer to [what] within the deadline: the warning line, and the 504 to throw. */
    fun timedOut(what: String): AppError {
        log.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: {}", what)
        return AppError.Timeout
    }

    /**
     * [what] failed with [e]: 504 when the client's own timeouts ended it (an [InterruptedIOException]
     * among the causes: `SocketTimeoutException`, `ConnectTimeoutException`), else 503 (refused, reset,
     * 429/5xx, an error body, an answer that is not a document or lacks the `X-Elastic-Product`
     * header); the warning line, and the error to throw.
     */
    fun failed(
        what: String,
        e: Throwable,
    ): AppError {
        if (e.causes().any { it is InterruptedIOException }) return timedOut(what)
        log.atWarn().setCause(e).log("Elasticsearch unavailable: {}", what)
        return AppError.Unavailable
    }

    override fun close() = restClient.close()
}
