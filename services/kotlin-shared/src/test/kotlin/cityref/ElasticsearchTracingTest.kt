package cityref

import co.elastic.clients.transport.ElasticsearchTransportBase
import co.elastic.clients.transport.instrumentation.NoopInstrumentation
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.TraceFlags
import io.opentelemetry.api.trace.TraceState
import io.opentelemetry.context.Context
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertSame
import kotlin.test.assertTrue

/** The client's span and the `traceparent` Elasticsearch gets, against a local stand-in for it. */
class ElasticsearchTracingTest {
    private val documents = mapOf("city/1" to """{"id":1,"name.en":"Brno"}""")

    private fun client(
        es: FakeElasticsearch,
        tracing: Tracing?,
    ) = Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to es.url)), tracing)

    /** A caller's span context (as a server span would be), current while [block] runs. */
    private fun <T> inCallerContext(
        sampled: Boolean,
        block: () -> T,
    ): Pair<SpanContext, T> {
        val caller =
            SpanContext.createFromRemoteParent(
                "4bf92f3577b34da6a3ce929d0e0e4736",
                "00f067aa0ba902b7",
                if (sampled) TraceFlags.getSampled() else TraceFlags.getDefault(),
                TraceState.getDefault(),
            )
        return caller to Context.root().with(Span.wrap(caller)).makeCurrent().use { block() }
    }

    @Test
    fun offTheTransportInstrumentsNothing() =
        FakeElasticsearch(documents).use { es ->
            client(es, null).use { client ->
                // Given explicitly: the transport's own choice would look up the global OpenTelemetry.
                val field = ElasticsearchTransportBase::class.java.getDeclaredField("instrumentation").apply { isAccessible = true }
                assertSame(NoopInstrumentation.INSTANCE, field.get(client.client._transport()))
            }
        }

    @Test
    fun offNoTraceparentIsSent() =
        FakeElasticsearch(documents).use { es ->
            client(es, null).use { client ->
                inCallerContext(sampled = true) { client.get(CITY_ALIAS, 1, cityFields("en")).get() }
            }
            assertEquals(1, es.requests.size)
            assertNull(es.requests.single().traceparent)
        }

    @Test
    fun onOneClientSpanChildOfTheCurrentSpanAndItsTraceSent() =
        FakeElasticsearch(documents).use { es ->
            InMemoryTracing().use { otel ->
                val (caller, response) =
                    client(es, otel.tracing).use { client ->
                        inCallerContext(sampled = true) { client.get(CITY_ALIAS, 1, cityFields("en")).get() }
                    }
                assertTrue(response.found())
                val span = otel.spans(1).single()
                assertEquals(SpanKind.CLIENT, span.kind)
                assertEquals(caller.traceId, span.traceId)
                assertEquals(caller.spanId, span.parentSpanId)
                assertEquals("GET", span.attributes.get(AttributeKey.stringKey("http.request.method")))
                // The client's instrumentation propagates nothing itself: the header names the current span.
                assertEquals("00-${caller.traceId}-${caller.spanId}-01", es.requests.single().traceparent)
            }
        }

    @Test
    fun onNotSampledNothingExportedButTheTraceIsSent() =
        FakeElasticsearch(documents).use { es ->
            InMemoryTracing().use { otel ->
                val (caller, _) =
                    client(es, otel.tracing).use { client ->
                        inCallerContext(sampled = false) { client.get(CITY_ALIAS, 2, cityFields("en")).get() }
                    }
                assertEquals(emptyList(), otel.exporter.finishedSpanItems)
                assertEquals("00-${caller.traceId}-${caller.spanId}-00", es.requests.single().traceparent)
            }
        }
}
