package cityref;

import static cityref.TracingFixtures.CALLER_SPAN;
import static cityref.TracingFixtures.METHOD;
import static cityref.TracingFixtures.ROUTE;
import static cityref.TracingFixtures.STATUS;
import static cityref.TracingFixtures.TRACE_ID;
import static cityref.TracingFixtures.assertCityServerSpan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Tracing on (OTEL_TRACES_EXPORTER=otlp): the whole application on Tomcat with a stand-in
 * Elasticsearch, Boot's span exporter replaced by the SDK's in-memory one. The server span (name,
 * kind, the stable HTTP attributes, the caller's traceparent as parent), the Elasticsearch client's
 * span as its child, and the traceparent on each request to Elasticsearch.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT,
        properties = {"OTEL_TRACES_EXPORTER=otlp", "management.tracing.export.otlp.enabled=false"})
class TracingTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static ElasticsearchStandIn elasticsearch;

    /** Instead of the OTLP exporter (turned off above). */
    @TestConfiguration
    static class Spans {
        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return InMemorySpanExporter.create();
        }
    }

    @DynamicPropertySource
    static void environment(DynamicPropertyRegistry registry) throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            int free = socket.getLocalPort();
            registry.add("PORT", () -> Integer.toString(free));
        }
        elasticsearch = new ElasticsearchStandIn();
        registry.add("ELASTICSEARCH_URL", elasticsearch::url);
    }

    @AfterAll
    static void stop() {
        elasticsearch.close();
    }

    @Value("${local.server.port}")
    int port;

    @Autowired
    InMemorySpanExporter spans;

    @Autowired
    SdkTracerProvider tracerProvider;

    @BeforeEach
    void reset() {
        tracerProvider.forceFlush().join(5, TimeUnit.SECONDS);
        spans.reset();
        elasticsearch.traceparents.clear();
    }

    private int get(String target, String traceparent) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + target));
        if (traceparent != null) {
            request.header("traceparent", traceparent);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** The finished spans of {@code kind}, once {@code count} are there (spans end after the answer is sent). */
    private List<SpanData> spans(SpanKind kind, int count) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            tracerProvider.forceFlush().join(5, TimeUnit.SECONDS);
            List<SpanData> found = spans.getFinishedSpanItems().stream()
                    .filter(span -> span.getKind() == kind)
                    .toList();
            if (found.size() >= count) {
                assertEquals(count, found.size(), found.toString());
                return found;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("expected " + count + " " + kind + " spans, got " + spans.getFinishedSpanItems());
    }

    @Test
    void cityLookupUnderTheCallersTrace() throws Exception {
        assertEquals(200, get("/city/v1/get?id=1&language=cs", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01"));
        SpanData server = spans(SpanKind.SERVER, 1).getFirst();
        assertCityServerSpan(server);

        // one client span per Elasticsearch request (the city, then its region), children of the server span
        for (SpanData client : spans(SpanKind.CLIENT, 2)) {
            assertEquals(TRACE_ID, client.getTraceId());
            assertEquals(server.getSpanId(), client.getParentSpanId());
            assertEquals("GET", client.getAttributes().get(METHOD));
        }
        // each request carried the trace, its parent the server span
        assertEquals(
                List.of(
                        "00-" + TRACE_ID + "-" + server.getSpanId() + "-01",
                        "00-" + TRACE_ID + "-" + server.getSpanId() + "-01"),
                elasticsearch.traceparents);
    }

    @Test
    void anUnsampledTraceExportsNothingButPropagates() throws Exception {
        assertEquals(200, get("/city/v1/get?id=2&language=cs", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-00"));
        assertEquals(2, elasticsearch.traceparents.size(), elasticsearch.traceparents.toString());
        for (String traceparent : elasticsearch.traceparents) {
            assertTrue(traceparent.startsWith("00-" + TRACE_ID + "-") && traceparent.endsWith("-00"), traceparent);
        }
        Thread.sleep(200);
        tracerProvider.forceFlush().join(5, TimeUnit.SECONDS);
        assertEquals(List.of(), spans.getFinishedSpanItems());
    }

    @Test
    void unknownPathHasNoRoute() throws Exception {
        assertEquals(404, get("/nope", null));
        SpanData server = spans(SpanKind.SERVER, 1).getFirst();
        assertEquals("GET", server.getName());
        assertEquals("0000000000000000", server.getParentSpanId());
        assertEquals(404L, server.getAttributes().get(STATUS));
        assertNull(server.getAttributes().get(ROUTE));
    }

    @Test
    void methodNotAllowedOnAListedPath() throws Exception {
        HttpResponse<Void> response = CLIENT.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.discarding());
        assertEquals(405, response.statusCode());
        SpanData server = spans(SpanKind.SERVER, 1).getFirst();
        assertEquals("POST /health", server.getName());
        assertEquals("POST", server.getAttributes().get(METHOD));
        assertEquals(405L, server.getAttributes().get(STATUS));
        assertEquals("/health", server.getAttributes().get(ROUTE));
    }
}
