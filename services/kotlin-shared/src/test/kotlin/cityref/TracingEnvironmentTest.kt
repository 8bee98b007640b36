package cityref

import com.sun.net.httpserver.HttpServer
import io.opentelemetry.api.trace.SpanKind
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/**
 * [Tracing.fromEnvironment] as the service builds it: the SDK's autoconfiguration with the spec's
 * defaults, against a local stand-in for an OTLP collector. The SDK reads its settings from system
 * properties as from environment variables, so the test sets properties (and removes them after).
 */
class TracingEnvironmentTest {
    private data class Export(
        val path: String,
        val contentType: String?,
        val bytes: Int,
    )

    @Test
    fun otlpOverHttpProtobufOnlyTracesFlushedOnClose() {
        val exports = CopyOnWriteArrayList<Export>()
        val collector =
            HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
                createContext("/") { exchange ->
                    val body = exchange.requestBody.readAllBytes()
                    exports += Export(exchange.requestURI.path, exchange.requestHeaders.getFirst("Content-Type"), body.size)
                    exchange.sendResponseHeaders(200, -1)
                    exchange.close()
                }
                start()
            }
        val properties =
            mapOf(
                "otel.traces.exporter" to "otlp",
                "otel.exporter.otlp.endpoint" to "http://127.0.0.1:${collector.address.port}",
                "otel.service.name" to "cityref-test",
                // a long batch delay: only the shutdown exports
                "otel.bsp.schedule.delay" to "60000",
            )
        try {
            properties.forEach(System::setProperty)
            val tracing = Tracing.fromEnvironment()
            tracing.openTelemetry
                .getTracer("test")
                .spanBuilder("GET /city/v1/get")
                .setSpanKind(SpanKind.SERVER)
                .startSpan()
                .end()
            assertEquals(emptyList(), exports)
            tracing.close()
            val export = exports.single()
            // The spec's default protocol (the SDK's own is gRPC), to the default path; no metrics, no logs.
            assertEquals("/v1/traces", export.path)
            assertEquals("application/x-protobuf", export.contentType)
            assertTrue(export.bytes > 0)
        } finally {
            properties.keys.forEach(System::clearProperty)
            collector.stop(0)
        }
    }
}
