package cityref

import io.opentelemetry.api.common.AttributeKey
import org.http4k.core.Method
import org.http4k.core.Method.DELETE
import org.http4k.core.Method.GET
import org.http4k.core.Method.HEAD
import org.http4k.core.Method.POST
import org.http4k.core.Request
import org.http4k.server.ServerConfig.StopMode
import java.net.Socket
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

private val METHOD_ORIGINAL = AttributeKey.stringKey("http.request.method_original")

/**
 * Tracing through the server filter and the Elasticsearch client's own instrumentation, end to end:
 * the app over a real client against a local stand-in for Elasticsearch, spans in memory.
 */
class TracingTest {
    private val documents =
        mapOf(
            "city/1" to """{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":10,"name.en":"Brno"}""",
            "region/10" to """{"name.en":"South Moravia"}""",
        )

    private fun <T> traced(block: (InMemoryTracing, FakeElasticsearch, Telemetry, CityService) -> T): T =
        FakeElasticsearch(documents).use { es ->
            InMemoryTracing().use { otel ->
                Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to es.url)), otel.tracing).use { client ->
                    block(otel, es, Telemetry(otel.tracing.openTelemetry), CityService(CityRepository(client)))
                }
            }
        }

    @Test
    fun `city - server span, client spans, traceparent`() =
        traced { otel, es, telemetry, service ->
            val app = cityrefApp(service, telemetry)
            val response = app(Request(GET, "/city/v1/get?id=1&language=en").header("traceparent", "00-$TRACE_ID-$CALLER_SPAN_ID-01"))
            assertEquals(200, response.status.code, response.bodyString())
            assertCityTraced(otel.spans(3), es)
        }

    @Test
    fun `without a caller context, a new trace`() =
        traced { otel, es, telemetry, service ->
            assertEquals(200, cityrefApp(service, telemetry)(Request(GET, "/city/v1/get?id=1&language=en")).status.code)
            val server = otel.spans(3).server()
            assertFalse(server.parentSpanContext.isValid)
            // A trace the SDK starts has a random trace id: W3C Trace Context level 2's flag 02 with the sampled 01.
            for (request in es.requests) assertEquals("00-${server.traceId}-${server.spanId}-03", request.traceparent)
        }

    @Test
    fun `unsampled caller - nothing exported, the trace still sent`() =
        traced { otel, es, telemetry, service ->
            val request = Request(GET, "/city/v1/get?id=1&language=en").header("traceparent", "00-$TRACE_ID-$CALLER_SPAN_ID-00")
            assertEquals(200, cityrefApp(service, telemetry)(request).status.code)
            assertEquals(emptyList(), otel.exporter.finishedSpanItems)
            assertEquals(2, es.requests.size)
            for (sent in es.requests) assertTrue(sent.traceparent!!.matches(Regex("00-$TRACE_ID-[0-9a-f]{16}-00")), sent.traceparent)
        }

    @Test
    fun `every answer has its server span`() =
        traced { otel, _, telemetry, service ->
            val app = cityrefApp(service, telemetry)
            // target, method → span name, status, route (null: no listed path matched, or the 414)
            val cases =
                listOf(
                    Triple("/city/v1/get?id=7&language=en", GET, Triple("GET /city/v1/get", 404L, "/city/v1/get")),
                    Triple("/city/v1/get?id=x", GET, Triple("GET /city/v1/get", 400L, "/city/v1/get")),
                    Triple("/health", GET, Triple("GET /health", 200L, "/health")),
                    Triple("/health", HEAD, Triple("HEAD /health", 200L, "/health")),
                    Triple("/city/v1/get", POST, Triple("POST /city/v1/get", 405L, "/city/v1/get")),
                    Triple("/nope", GET, Triple("GET", 404L, null)),
                    Triple("/", DELETE, Triple("DELETE", 404L, null)),
                    Triple("/city/v1/%67et", GET, Triple("GET", 404L, null)),
                    Triple("/health?" + "x".repeat(MAX_REQUEST_TARGET), GET, Triple("GET", 414L, null)),
                )
            for ((target, method, want) in cases) {
                otel.exporter.reset()
                assertEquals(want.second.toInt(), app(Request(method, target)).status.code, target)
                val server = otel.spans(1).server()
                assertEquals(want.first, server.name, "$method $target")
                assertEquals(method.name, server.attributes.get(METHOD))
                assertEquals(want.second, server.attributes.get(STATUS), "$method $target")
                assertEquals(want.third, server.attributes.get(ROUTE), "$method $target")
            }
        }

    @Test
    fun `a method http4k cannot represent, answered before it, has its span`() =
        traced { otel, _, telemetry, service ->
            val server =
                cityrefServer(
                    cityrefApp(service, telemetry),
                    0,
                    StopMode.Immediate,
                    telemetry,
                    virtualThreads = false,
                ).first.start()
            try {
                Socket("127.0.0.1", server.port()).use { socket ->
                    socket.getOutputStream().write("FOO /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".toByteArray())
                    val head = socket.getInputStream().bufferedReader().readLine()
                    assertEquals("HTTP/1.1 405 Method Not Allowed", head)
                }
            } finally {
                server.stop()
            }
            val span = otel.spans(1).server()
            // The semantic conventions' names for a method outside the known set.
            assertEquals("HTTP /health", span.name)
            assertEquals("_OTHER", span.attributes.get(METHOD))
            assertEquals("FOO", span.attributes.get(METHOD_ORIGINAL))
            assertEquals(405L, span.attributes.get(STATUS))
            assertEquals("/health", span.attributes.get(ROUTE))
        }

    @Test
    fun `off - no spans, no traceparent`() =
        FakeElasticsearch(documents).use { es ->
            Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to es.url))).use { client ->
                val app = cityrefApp(CityService(CityRepository(client)), Telemetry())
                val request = Request(Method.GET, "/city/v1/get?id=1&language=en").header("traceparent", "00-$TRACE_ID-$CALLER_SPAN_ID-01")
                assertEquals(200, app(request).status.code)
            }
            assertEquals(2, es.requests.size)
            for (request in es.requests) assertNull(request.traceparent)
        }
}
