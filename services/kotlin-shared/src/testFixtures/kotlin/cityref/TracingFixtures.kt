package cityref

import com.sun.net.httpserver.HttpServer
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator
import io.opentelemetry.context.propagation.ContextPropagators
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.test.assertEquals

/**
 * Test fixtures both Kotlin services' tracing tests share (compiled into each one's tests): a
 * [Tracing] whose spans end up in memory, and a stand-in for Elasticsearch that records what it was
 * sent.
 */
class InMemoryTracing : AutoCloseable {
    val exporter: InMemorySpanExporter = InMemorySpanExporter.create()

    /** The SDK as the service's default configuration has it (W3C trace context, parent-based always-on), exporting at once. */
    val tracing =
        Tracing(
            OpenTelemetrySdk
                .builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build(),
        )

    /** The spans ended so far, once [count] have (the server span ends after its response is sent). */
    fun spans(count: Int): List<SpanData> {
        val deadline = System.nanoTime() + 5_000_000_000L
        while (exporter.finishedSpanItems.size < count && System.nanoTime() < deadline) Thread.sleep(10)
        return exporter.finishedSpanItems
    }

    override fun close() = tracing.close()
}

/** One request Elasticsearch received: its method, target and `traceparent` (null if none). */
data class EsRequest(
    val method: String,
    val target: String,
    val traceparent: String?,
)

/**
 * A local HTTP server standing in for Elasticsearch: `GET /<alias>/_doc/<id>` answers the document
 * [documents] has under `"<alias>/<id>"` (else `"found":false`), as Elasticsearch does, product
 * header included; every request is recorded in [requests].
 */
class FakeElasticsearch(
    private val documents: Map<String, String>,
) : AutoCloseable {
    val requests = CopyOnWriteArrayList<EsRequest>()

    private val server =
        HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            createContext("/") { exchange ->
                val target = exchange.requestURI.toString()
                requests += EsRequest(exchange.requestMethod, target, exchange.requestHeaders.getFirst("traceparent"))
                val path = exchange.requestURI.path.trim('/').split('/')
                val body =
                    if (path.size == 3 && path[1] == "_doc") {
                        val source = documents["${path[0]}/${path[2]}"]
                        val head = """{"_index":"${path[0]}","_id":"${path[2]}""""
                        if (source == null) {
                            """$head,"found":false}"""
                        } else {
                            """$head,"_version":1,"_seq_no":0,"_primary_term":1,"found":true,"_source":$source}"""
                        }
                    } else {
                        """{"cluster_name":"fake","status":"green"}"""
                    }
                val bytes = body.toByteArray()
                exchange.responseHeaders.add("Content-Type", "application/json")
                exchange.responseHeaders.add("X-Elastic-Product", "Elasticsearch")
                exchange.sendResponseHeaders(200, bytes.size.toLong())
                exchange.responseBody.use { it.write(bytes) }
            }
            start()
        }

    val url = "http://127.0.0.1:${server.address.port}"

    override fun close() = server.stop(0)
}

val METHOD: AttributeKey<String> = AttributeKey.stringKey("http.request.method")
val STATUS: AttributeKey<Long> = AttributeKey.longKey("http.response.status_code")
val ROUTE: AttributeKey<String> = AttributeKey.stringKey("http.route")

/** A caller's context, sent as `traceparent` `00-TRACE_ID-CALLER_SPAN_ID-01`. */
const val TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const val CALLER_SPAN_ID = "00f067aa0ba902b7"

/** The one SERVER span among [spans]. */
fun List<SpanData>.server() = single { it.kind == SpanKind.SERVER }

/**
 * City 1 looked up under the caller's trace: the server span a child of the caller's span, with the
 * spec's name and attributes; one CLIENT span under it per Elasticsearch request (the city, then its
 * region 10); each request sent with a `traceparent` naming the server span.
 */
fun assertCityTraced(spans: List<SpanData>, es: FakeElasticsearch) {
    val server = spans.server()
    assertEquals("GET /city/v1/get", server.name)
    assertEquals(TRACE_ID, server.traceId)
    assertEquals(CALLER_SPAN_ID, server.parentSpanId)
    assertEquals("GET", server.attributes.get(METHOD))
    assertEquals(200L, server.attributes.get(STATUS))
    assertEquals("/city/v1/get", server.attributes.get(ROUTE))
    val clients = spans.filter { it.kind == SpanKind.CLIENT }
    assertEquals(2, clients.size, "one client span per Elasticsearch request: $spans")
    for (span in clients) {
        assertEquals(server.spanId, span.parentSpanId)
        assertEquals("GET", span.attributes.get(METHOD))
    }
    assertEquals(listOf("/city/_doc/1", "/region/_doc/10"), es.requests.map { it.target.substringBefore('?') })
    for (request in es.requests) assertEquals("00-$TRACE_ID-${server.spanId}-01", request.traceparent)
}
