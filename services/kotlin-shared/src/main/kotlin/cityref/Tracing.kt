package cityref

import co.elastic.clients.transport.TransportOptions
import co.elastic.clients.transport.instrumentation.Instrumentation
import co.elastic.clients.transport.instrumentation.OpenTelemetryForElasticsearch
import io.opentelemetry.context.Context
import io.opentelemetry.context.propagation.TextMapSetter
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk
import java.util.concurrent.TimeUnit

/**
 * How long the stop waits for the tracer provider's shutdown (the last batch exported): the spec's
 * 15 s from the signal to the exit include the framework's stop before it.
 */
private const val SHUTDOWN_WAIT_S = 3L

/**
 * OpenTelemetry tracing (the spec, "Tracing (OpenTelemetry)"), built only when
 * `OTEL_TRACES_EXPORTER=otlp` ([Config.tracing]); off, nothing of it exists and no SDK is loaded.
 *
 * The SDK is configured by its own standard variables only, read by opentelemetry-sdk-extension-autoconfigure
 * (`OTEL_EXPORTER_OTLP_*`, default `http://localhost:4318` over `http/protobuf`; `OTEL_TRACES_SAMPLER*`,
 * default `parentbased_always_on`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`,
 * `OTEL_PROPAGATORS`), with the spec's defaults where they differ from the SDK's ([DEFAULTS]). The
 * exporter sends with the JDK's HTTP client: `grpc` would need another sender (OkHttp), which the
 * services do not ship. No global instance is registered:
 * the framework's server instrumentation and the Elasticsearch client are given [openTelemetry].
 * The SDK's own diagnostics go to `java.util.logging`, whose console handler writes to stderr.
 */
class Tracing(
    val openTelemetry: OpenTelemetrySdk,
) : AutoCloseable {
    /**
     * The Elasticsearch client's own instrumentation (elasticsearch-java's `OpenTelemetryForElasticsearch`):
     * one CLIENT span per request, a child of the current span, with `http.request.method`. It sends no
     * `traceparent`: [propagate] does.
     */
    val elasticsearch: Instrumentation = OpenTelemetryForElasticsearch(openTelemetry, false)

    private val propagator = openTelemetry.propagators.textMapPropagator

    /**
     * The current context (the request's server span) as headers (`traceparent`; the configured
     * propagators) on the client's per-request [options]: sampled or not, Elasticsearch gets the trace.
     */
    fun propagate(options: TransportOptions.Builder): TransportOptions.Builder = options.also { propagator.inject(Context.current(), it, SETTER) }

    /** The tracer provider shut down: spans already ended are exported (waiting at most [SHUTDOWN_WAIT_S]). */
    override fun close() {
        openTelemetry.shutdown().join(SHUTDOWN_WAIT_S, TimeUnit.SECONDS)
    }

    companion object {
        /** The SDK as its environment variables configure it (the caller checked `OTEL_TRACES_EXPORTER`). */
        fun fromEnvironment(): Tracing =
            Tracing(
                AutoConfiguredOpenTelemetrySdk
                    .builder()
                    .addPropertiesSupplier { DEFAULTS }
                    // The service's stop shuts it down ([close]), before it exits.
                    .disableShutdownHook()
                    .build()
                    .openTelemetrySdk,
            )

        /**
         * Defaults where the spec differs from the SDK's, each overridden by its environment variable:
         * OTLP over `http/protobuf` (the SDK's own default is gRPC, on port 4317), and neither metrics nor
         * logs exported (the SDK's default exporter for both is `otlp`).
         */
        private val DEFAULTS =
            mapOf("otel.exporter.otlp.protocol" to "http/protobuf", "otel.metrics.exporter" to "none", "otel.logs.exporter" to "none")

        private val SETTER = TextMapSetter<TransportOptions.Builder> { options, name, value -> options?.setHeader(name, value) }
    }
}
