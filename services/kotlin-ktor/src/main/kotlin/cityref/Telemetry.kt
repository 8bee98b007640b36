package cityref

import io.ktor.http.HttpStatusCode
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.createApplicationPlugin
import io.ktor.server.application.hooks.ResponseBodyReadyForSend
import io.ktor.server.application.hooks.ResponseSent
import io.ktor.server.request.uri
import io.ktor.util.AttributeKey
import io.micrometer.core.instrument.Timer
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import io.opentelemetry.context.Context
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRoute
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRouteSource
import org.slf4j.LoggerFactory
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit

/** Methods of RFC 9110 plus PATCH; any other is counted as `_OTHER`. */
private val KNOWN_METHODS = setOf("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")

private val BUCKETS = doubleArrayOf(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)

/** Prometheus text format 0.0.4. */
const val METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** `http_server_request_duration_seconds` (OpenTelemetry's `http.server.request.duration`). */
class Metrics {
    val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
    private val slos = BUCKETS.map { Duration.ofNanos((it * 1e9).toLong()) }.toTypedArray()

    /** One timer per label set, registered once (a builder per request costs an id and a lookup). */
    private val timers = ConcurrentHashMap<Labels, Timer>()

    private data class Labels(
        val method: String,
        val route: String,
        val status: Int,
    )

    fun record(
        method: String,
        route: String,
        status: Int,
        nanos: Long,
    ) {
        val labels = Labels(if (method in KNOWN_METHODS) method else "_OTHER", route, status)
        timers
            .computeIfAbsent(labels) {
                Timer
                    .builder("http.server.request.duration")
                    .description("Duration of HTTP server requests.")
                    .tags(
                        "http_request_method",
                        it.method,
                        "http_route",
                        it.route,
                        "http_response_status_code",
                        it.status.toString(),
                    ).serviceLevelObjectives(*slos)
                    .register(registry)
            }.record(nanos, TimeUnit.NANOSECONDS)
    }

    fun scrape(): String = registry.scrape()
}

private val START = AttributeKey<Long>("cityref.start")
private val RECORDED = AttributeKey<Unit>("cityref.recorded")
private val SENT = AttributeKey<Unit>("cityref.sent")
private val requestLog = LoggerFactory.getLogger("cityref.request")

/** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
private const val MAX_LOGGED_TARGET = 8192

class RequestTelemetryConfig {
    lateinit var metrics: Metrics

    /** The call's `http_route` label, the transport's word: the listed path it matched, or `""`. */
    var routeOf: (ApplicationCall) -> String = { "" }

    /**
     * Tracing on (OpenTelemetry's server plugin installed): the call's route, [routeOf], is the server
     * span's `http.route` and names it.
     */
    var traced = false

    /** Requests received and not yet answered (the shutdown line logs it). */
    var inFlight =
        java.util.concurrent.atomic
            .AtomicInteger()
}

/**
 * Per request: one observation of the duration histogram when the response is ready to send (so
 * that a `/metrics` read made after a response always counts it), one `info` log line once it is
 * sent, and with tracing on the route of the server span; also counts the requests in flight for the
 * graceful shutdown.
 */
val RequestTelemetry =
    createApplicationPlugin("RequestTelemetry", ::RequestTelemetryConfig) {
        val metrics = pluginConfig.metrics
        val inFlight = pluginConfig.inFlight
        val routeOf = pluginConfig.routeOf
        val traced = pluginConfig.traced
        onCall { call ->
            inFlight.incrementAndGet()
            call.attributes.put(START, System.nanoTime())
            // The route as the histogram has it (the listed path, whatever the method: a 405 too), given
            // to the server span through the instrumentation API, as a framework's controller gives it;
            // the plugin's own (set only once the router resolved a handler, so never for a 405) ranks
            // below it (HttpServerRouteSource.SERVER).
            if (traced) {
                routeOf(call).takeIf { it.isNotEmpty() }?.let {
                    HttpServerRoute.update(Context.current(), HttpServerRouteSource.CONTROLLER, it)
                }
            }
        }
        on(ResponseBodyReadyForSend) { call, content ->
            // Once per call, here and below: StatusPages answers Ktor's own 404, 405 and 400 with a
            // second response, inside the first one's send.
            if (call.attributes.contains(RECORDED)) return@on
            call.attributes.put(RECORDED, Unit)
            // Neither set: Ktor sends 200 (BaseApplicationResponse.respondOutgoingContent).
            val status = content.status?.value ?: call.response.status()?.value ?: HttpStatusCode.OK.value
            metrics.record(call.request.local.method.value, routeOf(call), status, call.elapsedNanos())
        }
        on(ResponseSent) { call ->
            if (call.attributes.contains(SENT)) return@on
            call.attributes.put(SENT, Unit)
            inFlight.decrementAndGet()
            logRequest(call.request.local.method.value, call.request.uri, call.response.status()?.value ?: 0, call.elapsedNanos())
        }
    }

/** The request's log line (the target may be cut to its first 8192 bytes, as the spec allows). */
private fun logRequest(
    method: String,
    target: String,
    status: Int,
    nanos: Long,
) = requestLog
    .atInfo()
    .addKeyValue("method", method)
    .addKeyValue("path", target.take(MAX_LOGGED_TARGET))
    .addKeyValue("status", status)
    .addKeyValue("duration_ms", nanos / 1e6)
    .log("request")

private fun ApplicationCall.elapsedNanos(): Long = System.nanoTime() - (attributes.getOrNull(START) ?: System.nanoTime())
