package cityref;

import io.opentelemetry.api.common.AttributeKey;

/** What both Java services' tracing tests look for: the spec's span attributes and a caller's traceparent. */
final class TracingFixtures {
    static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String CALLER_SPAN = "00f067aa0ba902b7";

    private TracingFixtures() {}
}
