package cityref

import io.ktor.client.request.header
import io.ktor.client.request.request
import io.ktor.client.statement.bodyAsText
import io.ktor.http.HttpMethod
import io.ktor.server.testing.ApplicationTestBuilder
import io.ktor.server.testing.testApplication
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

/**
 * Tracing through OpenTelemetry's Ktor plugin and the Elasticsearch client's own instrumentation,
 * end to end: the app over a real client against a local stand-in for Elasticsearch, spans in memory.
 */
class TracingTest {
    private val documents =
        mapOf(
            "city/1" to """{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":10,"name.en":"Brno"}""",
            "region/10" to """{"name.en":"South Moravia"}""",
        )

    private fun traced(block: suspend ApplicationTestBuilder.(InMemoryTracing, FakeElasticsearch) -> Unit) =
        FakeElasticsearch(documents).use { es ->
            InMemoryTracing().use { otel ->
                Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to es.url)), otel.tracing).use { client ->
                    testApplication {
                        application {
                            cityref(
                                CityService(CityRepository(client)),
                                PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                                openTelemetry = otel.tracing.openTelemetry,
                            )
                        }
                        block(otel, es)
                    }
                }
            }
        }

    private suspend fun ApplicationTestBuilder.call(
        target: String,
        method: HttpMethod = HttpMethod.Get,
        traceparent: String? = null,
    ) = client.request(target) {
        this.method = method
        if (traceparent != null) header("traceparent", traceparent)
    }

    @Test
    fun cityServerSpanClientSpansAndTraceparent() =
        traced { otel, es ->
            assertEquals(200, call("/city/v1/get?id=1&language=en", traceparent = "00-$TRACE_ID-$CALLER_SPAN_ID-01").status.value)
            assertCityTraced(otel.spans(3), es)
        }

    @Test
    fun withoutACallerContextANewTrace() =
        traced { otel, es ->
            call("/city/v1/get?id=1&language=en").let { assertEquals(200, it.status.value, it.bodyAsText()) }
            val server = otel.spans(3).server()
            assertTrue(!server.parentSpanContext.isValid)
            // A trace the SDK starts has a random trace id: W3C Trace Context level 2's flag 02 with the sampled 01.
            for (request in es.requests) assertEquals("00-${server.traceId}-${server.spanId}-03", request.traceparent)
        }

    @Test
    fun unsampledCallerNothingExportedTraceStillSent() =
        traced { otel, es ->
            assertEquals(200, call("/city/v1/get?id=1&language=en", traceparent = "00-$TRACE_ID-$CALLER_SPAN_ID-00").status.value)
            Thread.sleep(200)
            assertEquals(emptyList(), otel.exporter.finishedSpanItems)
            assertEquals(2, es.requests.size)
            for (request in es.requests) {
                assertTrue(
                    request.traceparent!!.matches(Regex("00-$TRACE_ID-[0-9a-f]{16}-00")),
                    request.traceparent,
                )
            }
        }

    @Test
    fun everyAnswerHasItsServerSpan() =
        traced { otel, _ ->
            // target, method → span name, status, route (null: no listed path matched, or the 414)
            val cases =
                listOf(
                    Triple("/city/v1/get?id=7&language=en", HttpMethod.Get, Triple("GET /city/v1/get", 404L, "/city/v1/get")),
                    Triple("/city/v1/get?id=x", HttpMethod.Get, Triple("GET /city/v1/get", 400L, "/city/v1/get")),
                    Triple("/health", HttpMethod.Get, Triple("GET /health", 200L, "/health")),
                    Triple("/health", HttpMethod.Head, Triple("HEAD /health", 200L, "/health")),
                    Triple("/city/v1/get", HttpMethod.Post, Triple("POST /city/v1/get", 405L, "/city/v1/get")),
                    // A method outside the semantic conventions' list: `HTTP` and `_OTHER`, their rule.
                    Triple("/health", HttpMethod("FOO"), Triple("HTTP /health", 405L, "/health")),
                    Triple("/nope", HttpMethod.Get, Triple("GET", 404L, null)),
                    Triple("/", HttpMethod.Delete, Triple("DELETE", 404L, null)),
                    Triple("/city/v1/%67et", HttpMethod.Get, Triple("GET", 404L, null)),
                    Triple("/health?" + "x".repeat(MAX_REQUEST_TARGET), HttpMethod.Get, Triple("GET", 414L, null)),
                )
            for ((target, method, want) in cases) {
                otel.exporter.reset()
                assertEquals(want.second.toInt(), call(target, method).status.value, target)
                val server = otel.spans(1).server()
                assertEquals(want.first, server.name, "$method $target")
                assertEquals(if (method.value == "FOO") "_OTHER" else method.value, server.attributes.get(METHOD))
                assertEquals(want.second, server.attributes.get(STATUS), "$method $target")
                assertEquals(want.third, server.attributes.get(ROUTE), "$method $target")
            }
        }

    @Test
    fun offNoSpansAndNoTraceparent() =
        FakeElasticsearch(documents).use { es ->
            Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to es.url))).use { client ->
                testApplication {
                    application { cityref(CityService(CityRepository(client)), PrometheusMeterRegistry(PrometheusConfig.DEFAULT)) }
                    assertEquals(200, call("/city/v1/get?id=1&language=en", traceparent = "00-$TRACE_ID-$CALLER_SPAN_ID-01").status.value)
                }
            }
            assertEquals(2, es.requests.size)
            for (request in es.requests) assertNull(request.traceparent)
        }
}
