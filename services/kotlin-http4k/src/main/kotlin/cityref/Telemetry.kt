package cityref

import io.micrometer.core.instrument.Timer
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.context.Context
import io.opentelemetry.context.propagation.TextMapGetter
import io.opentelemetry.instrumentation.api.instrumenter.Instrumenter
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerAttributesExtractor
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerAttributesGetter
import io.opentelemetry.instrumentation.api.semconv.http.HttpSpanNameExtractor
import io.opentelemetry.instrumentation.api.semconv.http.HttpSpanStatusExtractor
import org.http4k.core.Filter
import org.http4k.core.Request
import org.http4k.filter.MicrometerMetrics
import org.http4k.filter.ResponseFilters
import org.http4k.filter.ServerFilters
import org.http4k.metrics.MetricsDefaults
import org.slf4j.LoggerFactory
import java.time.Duration

/** http4k's server timer (`MetricsDefaults.server`): Prometheus `http_server_request_latency_seconds`. */
private val TIMER = MetricsDefaults.server.timerDescription

/** The request target as sent: path and query (the server adapters hand it over undecoded). */
val Request.target: String get() = uri.toString()

private val requestLog = LoggerFactory.getLogger(RequestLine.LOGGER)

/**
 * Request logging, the duration histogram and, with tracing on, the server spans ([ServerTracing]), as
 * http4k filters: [ResponseFilters.ReportHttpTransaction] writes the request line,
 * http4k-ops-micrometer's `RequestTimer` records its timer (name, description and percentile
 * histogram its own), labelled `method`, `status` and `path` as its default labeler does, `path`
 * the transport's route (its default's is the routing group, which the exact-path routes have not).
 */
class Telemetry(
    openTelemetry: OpenTelemetry? = null,
) {
    /** Tracing on (kotlin-shared's [Tracing]): the server span of every request; null when off. */
    val tracing: ServerTracing? = openTelemetry?.let(::ServerTracing)

    val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)

    /** One `info` line per request: method, path (as sent), status, duration. */
    val logRequests: Filter =
        ResponseFilters.ReportHttpTransaction { tx ->
            logRequest(tx.request.method.name, tx.request.target, tx.response.status.code, tx.duration)
        }

    /** One observation per request; [routeOf] is the transport's word on its route (the listed path it matched, or `""`). */
    fun recordDuration(routeOf: (Request) -> String): Filter =
        ServerFilters.MicrometerMetrics.RequestTimer(registry, labeler = { tx ->
            tx.copy(labels = labels(methodLabel(tx.request.method.name), routeOf(tx.request), tx.response.status.code))
        })

    /** Both, for a request http4k cannot represent (see `OtherMethods`), with the transport's [route]. */
    fun record(
        method: String,
        route: String,
        target: String,
        status: Int,
        duration: Duration,
    ) {
        labels(methodLabel(method), route, status)
            .entries
            .fold(Timer.builder(TIMER.first).description(TIMER.second).publishPercentileHistogram()) { b, (k, v) -> b.tag(k, v) }
            .register(registry)
            .record(duration)
        logRequest(method, target, status, duration)
    }

    fun scrape(): String = registry.scrape()

    private fun labels(
        method: String,
        route: String,
        status: Int,
    ) = mapOf("method" to method, "status" to status.toString(), "path" to route)

    private fun logRequest(
        method: String,
        target: String,
        status: Int,
        duration: Duration,
    ) = requestLog
        .atInfo()
        .addKeyValue(RequestLine.METHOD, method)
        .addKeyValue(RequestLine.PATH, RequestLine.path(target))
        .addKeyValue(RequestLine.STATUS, status)
        .addKeyValue(RequestLine.DURATION_MS, duration.toNanos() / 1e6)
        .log(RequestLine.MESSAGE)
}

/**
 * What a request's server span reads of it, whichever layer answers it: http4k ([ServerTracing.filter])
 * or, for a method http4k cannot represent, the Jetty handler in front of it (`OtherMethods`).
 */
class TracedRequest(
    val method: String,
    val path: String,
    val query: String?,
    /** The listed path the request matched (the transport's word, as the histogram's `http_route`), or null. */
    val route: String?,
    val headers: (String) -> List<String>,
)

/**
 * One SERVER span per request (the spec, "Tracing (OpenTelemetry)") with OpenTelemetry's
 * instrumentation API, as its HTTP server instrumentations build theirs: an [Instrumenter] with the
 * HTTP semantic conventions' span name (`GET /city/v1/get`, the bare method without a route),
 * attributes (`http.request.method`, `http.response.status_code`, `http.route`, `url.*`) and status,
 * and the caller's `traceparent` extracted through the SDK's propagators. http4k's own OpenTelemetry
 * module is not in the registry (README.md, "Tracing"), so this is the smallest equivalent, in
 * http4k's extension point (a [Filter]); it never touches the connection.
 */
class ServerTracing(
    openTelemetry: OpenTelemetry,
) {
    private val instrumenter: Instrumenter<TracedRequest, Int> =
        Instrumenter
            .builder<TracedRequest, Int>(openTelemetry, INSTRUMENTATION_NAME, HttpSpanNameExtractor.create(Attributes))
            .setSpanStatusExtractor(HttpSpanStatusExtractor.create(Attributes))
            .addAttributesExtractor(HttpServerAttributesExtractor.create(Attributes))
            .buildServerInstrumenter(Headers)

    /**
     * [handle]'s answer within the request's server span, current while it runs (so that the
     * Elasticsearch client's spans are its children); [statusOf] reads its status.
     */
    fun <T> trace(
        request: TracedRequest,
        statusOf: (T) -> Int,
        handle: () -> T,
    ): T {
        val parent = Context.current()
        if (!instrumenter.shouldStart(parent, request)) return handle()
        val context = instrumenter.start(parent, request)
        val answer =
            try {
                context.makeCurrent().use { handle() }
            } catch (e: Throwable) {
                instrumenter.end(context, request, null, e)
                throw e
            }
        instrumenter.end(context, request, statusOf(answer), null)
        return answer
    }

    /** The filter in front of everything http4k answers, 404 and 405 included; [routeOf] is the transport's route (or `""`). */
    fun filter(routeOf: (Request) -> String): Filter =
        Filter { next ->
            { request ->
                val traced =
                    TracedRequest(
                        request.method.name,
                        request.uri.path,
                        request.uri.query.ifEmpty { null },
                        routeOf(request).ifEmpty { null },
                    ) {
                        request.headerValues(it).filterNotNull()
                    }
                trace(traced, { it.status.code }) { next(request) }
            }
        }

    private object Attributes : HttpServerAttributesGetter<TracedRequest, Int> {
        override fun getHttpRequestMethod(request: TracedRequest) = request.method

        override fun getHttpRequestHeader(
            request: TracedRequest,
            name: String,
        ) = request.headers(name)

        override fun getHttpResponseStatusCode(
            request: TracedRequest,
            response: Int?,
            error: Throwable?,
        ) = response

        override fun getHttpResponseHeader(
            request: TracedRequest,
            response: Int?,
            name: String,
        ) = emptyList<String>()

        override fun getUrlScheme(request: TracedRequest) = "http"

        override fun getUrlPath(request: TracedRequest) = request.path

        override fun getUrlQuery(request: TracedRequest) = request.query

        override fun getHttpRoute(request: TracedRequest) = request.route
    }

    private object Headers : TextMapGetter<TracedRequest> {
        override fun keys(carrier: TracedRequest) = emptyList<String>()

        override fun get(
            carrier: TracedRequest?,
            key: String,
        ) = carrier?.headers(key)?.firstOrNull()
    }

    private companion object {
        const val INSTRUMENTATION_NAME = "cityref-kotlin-http4k"
    }
}
