package cityref

import io.ktor.http.HttpMethod
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.createApplicationPlugin
import io.ktor.server.application.hooks.ResponseSent
import io.ktor.server.application.install
import io.ktor.server.metrics.micrometer.MicrometerMetrics
import io.ktor.server.plugins.calllogging.CallLogging
import io.ktor.server.plugins.calllogging.processingTimeMillis
import io.ktor.server.request.uri
import io.ktor.util.AttributeKey
import io.micrometer.core.instrument.Timer
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import org.slf4j.LoggerFactory
import org.slf4j.event.Level

/** Ktor's MicrometerMetrics timer (the descriptor's `metrics` names its Prometheus form). */
private const val TIMER = "ktor.http.server.requests"

/**
 * Ktor's own request telemetry: MicrometerMetrics (its timer as a Prometheus histogram with
 * Micrometer's own buckets) and CallLogging (the request line, its fields as MDC entries).
 * [routeOf] is the transport's `route` tag: the listed path for any method (405 included), else `""`.
 */
fun Application.telemetry(
    registry: PrometheusMeterRegistry,
    routeOf: (ApplicationCall) -> String,
) {
    install(MicrometerMetrics) {
        this.registry = registry
        distributionStatisticConfig = DistributionStatisticConfig.Builder().percentilesHistogram(true).build()
        // The method as sent (AutoHeadResponse turns a HEAD into a GET for the router) and the route for
        // every call (the plugin's own is set only once the router chose a handler: never for a 405).
        timers { call, _ -> tags("method", call.request.local.method.value, "route", routeOf(call)) }
    }
    install(OtherMethodsMetrics) {
        this.registry = registry
        this.routeOf = routeOf
    }
    install(CallLogging) {
        logger = LoggerFactory.getLogger("cityref.request")
        level = Level.INFO
        disableDefaultColors()
        format { "request" }

        // CallLogging keeps an entry's first value: set once the call has its status, these four are
        // on the request line only (LogstashEncoder writes status and duration_ms as numbers: logback.xml).
        fun answered(value: (ApplicationCall) -> Any): (ApplicationCall) -> String? =
            { call -> call.response.status()?.let { value(call).toString() } }
        mdc("method", answered { it.request.local.method.value })
        mdc("path", answered { it.request.uri.take(MAX_LOGGED_TARGET) })
        mdc("status", answered { it.response.status()!!.value })
        mdc("duration_ms", answered { it.processingTimeMillis() })
    }
}

/** Requests in flight: MicrometerMetrics' gauge (the shutdown line logs it). */
fun PrometheusMeterRegistry.inFlight(): Int = find("$TIMER.active").gauge()?.value()?.toInt() ?: 0

class OtherMethodsConfig {
    lateinit var registry: PrometheusMeterRegistry
    var routeOf: (ApplicationCall) -> String = { "" }
}

private val SAMPLE = AttributeKey<Timer.Sample>("cityref.otherMethodSample")

/**
 * MicrometerMetrics times only Ktor's default methods; the spec counts every request. The others
 * (TRACE, CONNECT, unknown tokens) go into the same timer with the same tags, the method `_OTHER`
 * outside RFC 9110.
 */
private val OtherMethodsMetrics =
    createApplicationPlugin("OtherMethodsMetrics", ::OtherMethodsConfig) {
        val registry = pluginConfig.registry
        val routeOf = pluginConfig.routeOf
        onCall { call ->
            if (call.request.local.method !in HttpMethod.DefaultMethods) call.attributes.put(SAMPLE, Timer.start(registry))
        }
        on(ResponseSent) { call ->
            val sample = call.attributes.getOrNull(SAMPLE) ?: return@on
            call.attributes.remove(SAMPLE)
            val local = call.request.local
            val status = call.response.status()?.value ?: "n/a"
            val timer =
                Timer
                    .builder(TIMER)
                    .tag("address", "${local.localHost}:${local.localPort}")
                    .tag("method", local.method.value.takeIf { it in RFC9110_METHODS } ?: "_OTHER")
                    .tag("route", routeOf(call))
                    .tag("status", status.toString())
                    .tag("throwable", "n/a")
            sample.stop(timer.register(registry))
        }
    }

/** RFC 9110's methods outside Ktor's defaults. */
private val RFC9110_METHODS = setOf("CONNECT", "TRACE")

/** The longest request target logged (the spec: a 414's may be cut to its first 8192 bytes). */
private const val MAX_LOGGED_TARGET = 8192
