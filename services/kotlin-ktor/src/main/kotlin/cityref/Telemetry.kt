package cityref

import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.createApplicationPlugin
import io.ktor.server.application.hooks.ResponseBodyReadyForSend
import io.ktor.server.application.install
import io.ktor.server.plugins.calllogging.CallLogging
import io.ktor.server.plugins.calllogging.processingTimeMillis
import io.ktor.server.request.uri
import io.ktor.util.AttributeKey
import io.micrometer.core.instrument.Timer
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import org.slf4j.LoggerFactory
import org.slf4j.event.Level
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

/** The spec's buckets (OpenTelemetry's defaults for `http.server.request.duration`), in seconds. */
private val BUCKETS = listOf(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)

/**
 * The request telemetry: [RequestMetrics] (the spec's histogram) and Ktor's CallLogging (the
 * request line, its fields as MDC entries). [routeOf] is the transport's route: the listed path for
 * any method (405 included), else `""`.
 */
fun Application.telemetry(
    registry: PrometheusMeterRegistry,
    routeOf: (ApplicationCall) -> String,
) {
    install(RequestMetrics) {
        this.registry = registry
        this.routeOf = routeOf
    }
    install(CallLogging) {
        logger = LoggerFactory.getLogger(RequestLine.LOGGER)
        level = Level.INFO
        disableDefaultColors()
        format { RequestLine.MESSAGE }

        // CallLogging keeps an entry's first value: set once the call has its status, these four are
        // on the request line only (LogstashEncoder writes status and duration_ms as numbers: logback.xml).
        fun answered(value: (ApplicationCall) -> Any): (ApplicationCall) -> String? =
            { call -> call.response.status()?.let { value(call).toString() } }
        mdc(RequestLine.METHOD, answered { it.request.local.method.value })
        mdc(RequestLine.PATH, answered { RequestLine.path(it.request.uri) })
        mdc(RequestLine.STATUS, answered { it.response.status()!!.value })
        mdc(RequestLine.DURATION_MS, answered { it.processingTimeMillis() })
    }
}

/** Requests in flight (the shutdown line logs it). */
fun PrometheusMeterRegistry.inFlight(): Int = find("http.server.active_requests").gauge()?.value()?.toInt() ?: 0

class RequestMetricsConfig {
    lateinit var registry: PrometheusMeterRegistry
    var routeOf: (ApplicationCall) -> String = { "" }
}

private val START = AttributeKey<Long>("cityref.start")

/**
 * `http.server.request.duration` (Prometheus `http_server_request_duration_seconds`) with the spec's
 * labels and buckets, observed when the response is ready to send, once per call. Not Ktor's
 * MicrometerMetrics: it observes on `ResponseSent`, after the answer is written, so a `/metrics` read
 * made right after an answer may not count it (README.md, "Metrics"). Also counts requests in flight
 * (until their answer is ready).
 */
private val RequestMetrics =
    createApplicationPlugin("RequestMetrics", ::RequestMetricsConfig) {
        val registry = pluginConfig.registry
        val routeOf = pluginConfig.routeOf
        val inFlight = registry.gauge("http.server.active_requests", AtomicInteger())!!
        val slos = BUCKETS.map { Duration.ofNanos((it * 1e9).toLong()) }.toTypedArray()
        onCall { call ->
            inFlight.incrementAndGet()
            call.attributes.put(START, System.nanoTime())
        }
        on(ResponseBodyReadyForSend) { call, content ->
            // Once per call (removed here): a status page's answer is sent inside the first one's send.
            val start = call.attributes.getOrNull(START) ?: return@on
            call.attributes.remove(START)
            inFlight.decrementAndGet()
            Timer
                .builder("http.server.request.duration")
                .tag("http_request_method", methodLabel(call.request.local.method.value))
                .tag("http_route", routeOf(call))
                // Neither set: Ktor sends 200 (BaseApplicationResponse.respondOutgoingContent).
                .tag("http_response_status_code", (content.status ?: call.response.status())?.value?.toString() ?: "200")
                .serviceLevelObjectives(*slos)
                .register(registry)
                .record(Duration.ofNanos(System.nanoTime() - start))
        }
    }
