package cityref

import io.micrometer.core.instrument.Meter
import io.micrometer.core.instrument.Timer
import io.micrometer.core.instrument.config.MeterFilter
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import org.http4k.core.Filter
import org.http4k.core.HttpTransaction
import org.http4k.core.Request
import org.http4k.filter.MicrometerMetrics
import org.http4k.filter.ResponseFilters
import org.http4k.filter.ServerFilters
import org.slf4j.LoggerFactory
import java.time.Duration

/** Methods of RFC 9110 plus PATCH; any other is counted as `_OTHER`. */
private val KNOWN_METHODS = setOf("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")

/** `http.server.request.duration` → Prometheus `http_server_request_duration_seconds`. */
private const val TIMER = "http.server.request.duration"
private val BUCKETS = doubleArrayOf(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)

/** Prometheus text format 0.0.4. */
const val METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** The request target as sent: path and query (the server adapters hand it over undecoded). */
val Request.target: String get() = uri.toString()

/** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
private const val MAX_LOGGED_TARGET = 8192

private val requestLog = LoggerFactory.getLogger("cityref.request")

/**
 * Request logging and the duration histogram, as http4k filters: [ResponseFilters.ReportHttpTransaction]
 * writes the request line, http4k-ops-micrometer's `RequestTimer` records the histogram under the
 * contract's name and labels (its defaults — `http.server.request.latency`, `method`/`status`/`path`
 * and a percentile histogram — are replaced by the labeler and the [MeterFilter] below).
 */
class Telemetry {
    val registry =
        PrometheusMeterRegistry(PrometheusConfig.DEFAULT).apply {
            config().meterFilter(
                object : MeterFilter {
                    override fun configure(
                        id: Meter.Id,
                        config: DistributionStatisticConfig,
                    ): DistributionStatisticConfig =
                        if (id.name != TIMER) {
                            config
                        } else {
                            DistributionStatisticConfig
                                .builder()
                                .percentilesHistogram(false)
                                .serviceLevelObjectives(*BUCKETS.map { it * 1e9 }.toDoubleArray()) // nanoseconds
                                .build()
                                .merge(config)
                        }
                },
            )
        }

    /** One `info` line per request: method, path (as sent), status, duration. */
    val logRequests: Filter =
        ResponseFilters.ReportHttpTransaction { tx ->
            log(tx.request.method.name, tx.request.target, tx.response.status.code, tx.duration)
        }

    /**
     * One histogram observation per request, labelled as the contract says; [routeOf] is the
     * transport's word on the request's `http_route` (the listed path it matched, or `""`).
     */
    fun recordDuration(routeOf: (Request) -> String): Filter =
        ServerFilters.MicrometerMetrics.RequestTimer(
            registry,
            name = TIMER,
            description = "Duration of HTTP server requests.",
            labeler = { tx: HttpTransaction ->
                tx.copy(labels = labels(tx.request.method.name, routeOf(tx.request), tx.response.status.code))
            },
        )

    /** Both, for a request http4k cannot represent (see [OtherMethods]), with the transport's [route]. */
    fun record(
        method: String,
        route: String,
        target: String,
        status: Int,
        duration: Duration,
    ) {
        labels(method, route, status)
            .entries
            .fold(Timer.builder(TIMER).description("Duration of HTTP server requests.")) { b, (k, v) -> b.tag(k, v) }
            .register(registry)
            .record(duration)
        log(method, target, status, duration)
    }

    fun scrape(): String = registry.scrape()

    private fun labels(
        method: String,
        route: String,
        status: Int,
    ) = mapOf(
        "http_request_method" to if (method in KNOWN_METHODS) method else "_OTHER",
        "http_route" to route,
        "http_response_status_code" to status.toString(),
    )

    private fun log(
        method: String,
        target: String,
        status: Int,
        duration: Duration,
    ) {
        requestLog
            .atInfo()
            .addKeyValue("method", method)
            .addKeyValue("path", target.take(MAX_LOGGED_TARGET))
            .addKeyValue("status", status)
            .addKeyValue("duration_ms", duration.toNanos() / 1e6)
            .log("request")
    }
}
