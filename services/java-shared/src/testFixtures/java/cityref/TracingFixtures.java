package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;

/** What both Java services' tracing tests look for: the spec's span attributes and a caller's traceparent. */
final class TracingFixtures {
    static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String CALLER_SPAN = "00f067aa0ba902b7";

    private TracingFixtures() {}

    /** The server span of {@code GET /city/v1/get} answered 200 under the caller's trace (TRACE_ID, CALLER_SPAN). */
    static void assertCityServerSpan(SpanData server) {
        assertEquals("GET /city/v1/get", server.getName());
        assertEquals(TRACE_ID, server.getTraceId());
        assertEquals(CALLER_SPAN, server.getParentSpanId());
        assertEquals("GET", server.getAttributes().get(METHOD));
        assertEquals(200L, server.getAttributes().get(STATUS));
        assertEquals("/city/v1/get", server.getAttributes().get(ROUTE));
    }
}
