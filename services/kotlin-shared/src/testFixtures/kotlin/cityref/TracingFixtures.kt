package cityref

import com.sun.net.httpserver.HttpServer
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator
import io.opentelemetry.context.propagation.ContextPropagators
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList

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
