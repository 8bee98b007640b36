package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Tracing off (OTEL_TRACES_EXPORTER unset, the default): none of Boot's tracing or OpenTelemetry
 * beans exists, and an incoming traceparent is not passed on to Elasticsearch.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT)
class TracingOffTest {
    private static ElasticsearchStandIn elasticsearch;

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
    ApplicationContext context;

    @Test
    void noTracingBeans() {
        List<String> tracing = Arrays.stream(context.getBeanDefinitionNames())
                .filter(name -> {
                    Class<?> type = context.getType(name);
                    String typeName = type == null ? "" : type.getName();
                    return typeName.startsWith("io.opentelemetry.")
                            || typeName.startsWith("io.micrometer.tracing.")
                            || typeName.startsWith("org.springframework.boot.opentelemetry.")
                            || typeName.startsWith("org.springframework.boot.micrometer.tracing.")
                            || typeName.equals(Tracing.class.getName());
                })
                .toList();
        assertEquals(List.of(), tracing);
    }

    @Test
    void traceparentIgnored() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/city/v1/get?id=1&language=cs"))
                                .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        assertEquals(List.of("null", "null"), elasticsearch.traceparents);
        assertTrue(response.headers().firstValue("traceparent").isEmpty());
    }
}
