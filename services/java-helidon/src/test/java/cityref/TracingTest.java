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

import io.helidon.webclient.http1.Http1Client;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.helidon.webserver.testing.junit5.SetUpServer;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tracing on: the server span (name, kind, the stable HTTP attributes, the caller's traceparent as
 * parent), the Elasticsearch client's span as its child, and the traceparent on each request to a
 * stand-in Elasticsearch (a JDK HTTP server), with the SDK's in-memory exporter.
 */
@ServerTest
class TracingTest {

    private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    private static final OpenTelemetrySdk SDK = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(SPANS))
                    .build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    private static final ElasticsearchStandIn ELASTICSEARCH = ElasticsearchStandIn.start();
    /** The {@code traceparent} of each document request Elasticsearch received ("null": none). */
    private static final List<String> SENT = ELASTICSEARCH.traceparents;

    private static final CityRepository REPOSITORY = new CityRepository(
            Config.load(Map.of("ELASTICSEARCH_URL", ELASTICSEARCH.url(), "OTEL_TRACES_EXPORTER", "otlp")),
            SDK,
            System::nanoTime);

    private final Http1Client client;
    private final int port;

    TracingTest(Http1Client client, WebServer server) {
        this.client = client;
        this.port = server.port();
    }

    /** The server as Main configures it with tracing on, on the stand-in Elasticsearch. */
    @SetUpServer
    static void server(WebServerConfig.Builder server) {
        Telemetry telemetry = new Telemetry();
        Tracing tracing = new Tracing(SDK);
        Transport.server(server, io.helidon.config.Config.create().get("server"), telemetry, tracing)
                .port(0)
                .routing(routing -> Transport.routing(routing, new CityService(REPOSITORY), telemetry, tracing));
    }

    @AfterAll
    static void stop() throws Exception {
        REPOSITORY.close();
        ELASTICSEARCH.close();
        Tracing.shutdown(SDK);
    }

    @BeforeEach
    void reset() {
        SPANS.reset();
        SENT.clear();
    }

    /** The finished spans once {@code count} of them match (spans end after the answer is sent). */
    private static List<SpanData> spans(int count, Predicate<SpanData> which) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            List<SpanData> spans =
                    SPANS.getFinishedSpanItems().stream().filter(which).toList();
            if (spans.size() >= count) {
                return spans;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("expected " + count + " spans, got " + SPANS.getFinishedSpanItems());
    }

    private static SpanData serverSpan() throws InterruptedException {
        List<SpanData> spans = spans(1, span -> span.getKind() == SpanKind.SERVER);
        assertEquals(1, spans.size(), spans.toString());
        return spans.getFirst();
    }

    @Test
    void cityLookupUnderTheCallersTrace() throws Exception {
        try (var response = client.get("/city/v1/get")
                .queryParam("id", "1")
                .queryParam("language", "cs")
                .header(io.helidon.http.HeaderNames.create("traceparent"), "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01")
                .request()) {
            assertEquals(200, response.status().code());
        }
        SpanData server = serverSpan();
        assertCityServerSpan(server);

        // one client span per Elasticsearch request (the city, then its region), children of the server span
        List<SpanData> clients = spans(2, span -> span.getKind() == SpanKind.CLIENT);
        assertEquals(2, clients.size(), clients.toString());
        for (SpanData span : clients) {
            assertEquals(TRACE_ID, span.getTraceId());
            assertEquals(server.getSpanId(), span.getParentSpanId());
            assertEquals("GET", span.getAttributes().get(METHOD));
            assertEquals("get", span.getName());
        }
        // each request carried the trace, its parent the server span
        assertEquals(2, SENT.size(), SENT.toString());
        for (String traceparent : SENT) {
            assertEquals("00-" + TRACE_ID + "-" + server.getSpanId() + "-01", traceparent);
        }
    }

    @Test
    void aNewTraceWithoutTraceparent() throws Exception {
        try (var response = client.get("/city/v1/get")
                .queryParam("id", "2")
                .queryParam("language", "cs")
                .request()) {
            assertEquals(200, response.status().code());
        }
        SpanData server = serverSpan();
        assertEquals("0000000000000000", server.getParentSpanId());
        assertEquals(2, SENT.size(), SENT.toString());
        assertTrue(SENT.getFirst().startsWith("00-" + server.getTraceId() + "-"), SENT.toString());
    }

    @Test
    void anUnsampledTraceExportsNothingButPropagates() throws Exception {
        try (var response = client.get("/city/v1/get")
                .queryParam("id", "3")
                .queryParam("language", "cs")
                .header(io.helidon.http.HeaderNames.create("traceparent"), "00-" + TRACE_ID + "-" + CALLER_SPAN + "-00")
                .request()) {
            assertEquals(200, response.status().code());
        }
        assertEquals(2, SENT.size(), SENT.toString());
        for (String traceparent : SENT) {
            assertTrue(traceparent.startsWith("00-" + TRACE_ID + "-"), traceparent);
            assertTrue(traceparent.endsWith("-00"), traceparent);
        }
        Thread.sleep(200);
        assertEquals(List.of(), SPANS.getFinishedSpanItems());
    }

    @Test
    void unknownPathHasNoRoute() throws Exception {
        try (var response = client.get("/nope").request()) {
            assertEquals(404, response.status().code());
        }
        SpanData server = serverSpan();
        assertEquals("GET", server.getName());
        assertEquals(404L, server.getAttributes().get(STATUS));
        assertNull(server.getAttributes().get(ROUTE));
    }

    @Test
    void methodNotAllowedOnAListedPath() throws Exception {
        try (var response = client.post("/health").request()) {
            assertEquals(405, response.status().code());
        }
        SpanData server = serverSpan();
        assertEquals("POST /health", server.getName());
        assertEquals("POST", server.getAttributes().get(METHOD));
        assertEquals(405L, server.getAttributes().get(STATUS));
        assertEquals("/health", server.getAttributes().get(ROUTE));
    }

    /** A request Helidon refuses before routing (no colon in a header field) still gets its span. */
    @Test
    void requestRefusedBeforeRouting() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
        }
        SpanData server = serverSpan();
        assertEquals(400L, server.getAttributes().get(STATUS));
        assertNull(server.getAttributes().get(ROUTE));
    }

    /** The SDK as Main builds it: from the OTEL_* variables, traces only. */
    @Test
    void sdkFromTheEnvironmentExportsTracesOnly() {
        OpenTelemetrySdk sdk = Tracing.sdk();
        try {
            String text = sdk.toString();
            // OTLP over http/protobuf to the default endpoint, parent-based always-on sampling
            assertTrue(text.contains("OtlpHttpSpanExporter{endpoint=http://localhost:4318/v1/traces"), text);
            assertTrue(text.contains("sampler=ParentBased{root:AlwaysOnSampler"), text);
            // no metric reader, no log processor
            assertTrue(text.contains("metricReaders=[]"), text);
            assertTrue(text.contains("logRecordProcessor=NoopLogRecordProcessor"), text);
        } finally {
            Tracing.shutdown(sdk);
        }
    }
}
