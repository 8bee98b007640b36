package cityref

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient
import co.elastic.clients.elasticsearch.core.GetRequest
import co.elastic.clients.json.jackson.JacksonJsonpMapper
import co.elastic.clients.transport.rest_client.RestClientTransport
import com.fasterxml.jackson.databind.node.ObjectNode
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.future.await
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import kotlinx.coroutines.withTimeout
import org.apache.http.HttpHost
import org.apache.http.impl.nio.reactor.IOReactorConfig
import org.apache.http.message.BasicHeader
import org.elasticsearch.client.RestClient
import org.slf4j.LoggerFactory
import java.util.Base64
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap

/** A document's `_source`: GoOut's flat dotted keys (`"name.en"`). */
typealias Source = ObjectNode

/** What the service needs from the backend (the [Repository], or a fake in tests). */
interface CityLookup {
    suspend fun findCity(
        id: Long,
        language: String,
    ): Source?

    suspend fun findRegion(id: Long): Source?
}

private const val CITY_ALIAS = "city"
private const val REGION_ALIAS = "region"

/** Pooled connections to Elasticsearch and permits for requests in flight, the spec's bound; sized by measurement (README.md). */
private const val MAX_CONNECTIONS = 64

/** A region is cached for every language, so all its names are fetched (never `geometry`). */
private val REGION_FIELDS = listOf("name.cs", "name.de", "name.en", "name.pl", "name.sk")

/**
 * Elasticsearch access through the official Java client's async API (Apache HttpAsyncClient
 * underneath, no blocking on Ktor's threads), bridged to coroutines with `await()`.
 * Cities are never cached; regions that were found are, for the life of the process.
 */
class Repository(
    private val config: Config,
) : CityLookup,
    AutoCloseable {
    private val log = LoggerFactory.getLogger(Repository::class.java)
    private val timeoutMs = config.elasticsearchTimeoutMs
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
                HttpHost(config.elasticsearchUrl.host, effectivePort(config), config.elasticsearchUrl.scheme),
            ).apply {
                config.elasticsearchUrl.rawPath
                    ?.takeIf { it.isNotEmpty() && it != "/" }
                    ?.let { setPathPrefix(it.trimEnd('/')) }
                // Basic auth sent preemptively (a credentials provider would wait for a 401 first).
                if (config.username != null) {
                    val token = Base64.getEncoder().encodeToString("${config.username}:${config.password ?: ""}".toByteArray())
                    setDefaultHeaders(arrayOf(BasicHeader("Authorization", "Basic $token")))
                }
                // The coroutine timeout below decides 504; the client's own timeouts only back it up.
                setRequestConfigCallback {
                    it.setConnectTimeout((timeoutMs + 1000).toInt()).setSocketTimeout((timeoutMs + 1000).toInt())
                }
                // As the client's maintainers advise for a hot path without credentials: no auth cache (its
                // BasicAuthCache deserialises the scheme on every request), no cookie store, no system
                // properties (proxy and credential lookups); a bounded pool (the spec's bound on requests
                // in flight). The I/O reactor checks timeouts once per select interval (1 s by default).
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
    suspend fun checkHealth(timeoutMs: Long) {
        withTimeout(timeoutMs) { client.cluster().health().await() }
    }

    /** The city's scalar fields and its name in [language]; null for a plain not-found. */
    override suspend fun findCity(
        id: Long,
        language: String,
    ): Source? = getSource(CITY_ALIAS, id, listOf("id", "countryIso", "isFeatured", "regionId", "name.$language"))

    /** The region's names, from the cache or else from Elasticsearch. */
    override suspend fun findRegion(id: Long): Source? {
        regions[id]?.let { return it }
        val region = getSource(REGION_ALIAS, id, REGION_FIELDS) ?: return null
        regions[id] = region
        return region
    }

    /**
     * `GET /<alias>/_doc/<id>?_source_includes=<fields>`: the `_source` of a found document,
     * null for a plain not-found ({"found":false}), [AppError.Timeout] when there is no answer
     * in time, [AppError.Unavailable] for anything else (refused, reset, 429/5xx, an error
     * body, an answer that is not a document or lacks the X-Elastic-Product header).
     */
    private suspend fun getSource(
        alias: String,
        id: Long,
        fields: List<String>,
    ): Source? {
        val request = GetRequest.of { it.index(alias).id(id.toString()).sourceIncludes(fields) }
        val response = call("GET /$alias/_doc/$id") { client.get(request, ObjectNode::class.java) }
        if (!response.found()) return null
        return response.source() ?: run {
            log.warn("Elasticsearch answered GET /{}/_doc/{} with a document without _source", alias, id)
            throw AppError.Unavailable
        }
    }

    private suspend fun <T> call(
        what: String,
        request: () -> CompletableFuture<T>,
    ): T {
        var future: CompletableFuture<T>? = null
        return try {
            withTimeout(timeoutMs) { inFlight.withPermit { request().also { future = it }.await() } }
        } catch (e: TimeoutCancellationException) {
            future?.cancel(true)
            log.atWarn().addKeyValue("timeout_ms", timeoutMs).log("Elasticsearch timed out: {}", what)
            throw AppError.Timeout
        } catch (e: kotlinx.coroutines.CancellationException) {
            throw e
        } catch (e: Exception) {
            log.atWarn().addKeyValue("error", describe(e)).log("Elasticsearch unavailable: {}", what)
            throw AppError.Unavailable
        }
    }

    override fun close() {
        restClient.close()
    }

    private companion object {
        fun effectivePort(config: Config): Int =
            config.elasticsearchUrl.port.takeIf { it > 0 }
                ?: if (config.elasticsearchUrl.scheme == "https") 443 else 80
    }
}

/** An exception and its causes, each text once. */
fun describe(e: Throwable): String {
    val parts = mutableListOf<String>()
    var t: Throwable? = e
    while (t != null && parts.size < 5) {
        val text = t.message?.let { "${t.javaClass.simpleName}: $it" } ?: t.javaClass.simpleName
        if (parts.lastOrNull() != text) parts += text
        t = t.cause.takeIf { it !== t }
    }
    return parts.joinToString(" <- ")
}
