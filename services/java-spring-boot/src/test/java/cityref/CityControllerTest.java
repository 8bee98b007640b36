package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The whole application on Tomcat (a random port), Elasticsearch replaced by a mock repository:
 * the routes, the error contract, the request-target rules and the metrics, over real HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT)
class CityControllerTest {
    private static final JsonMapper MAPPER = JsonMapper.builder().build();
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @MockitoBean
    CityRepository repository;

    /** PORT is the service's to validate (1-65535, so no 0): a free port, found first. */
    @DynamicPropertySource
    static void port(DynamicPropertyRegistry registry) throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            int free = socket.getLocalPort();
            registry.add("PORT", () -> Integer.toString(free));
        }
    }

    @Value("${local.server.port}")
    int port;

    @BeforeEach
    void backend() {
        when(repository.findCity(eq(1L), anyString()))
                .thenReturn(json(
                        "{\"id\":1,\"countryIso\":\"CZ\",\"isFeatured\":true,\"regionId\":1,\"name.cs\":\"Plzeň\"}"));
        when(repository.findCity(eq(2L), anyString()))
                .thenReturn(json(
                        "{\"id\":2,\"countryIso\":\"CZ\",\"isFeatured\":false,\"regionId\":99,\"name.cs\":\"X\"}"));
        when(repository.findCity(eq(3L), anyString()))
                .thenReturn(json("{\"id\":3,\"countryIso\":\"CZ\",\"isFeatured\":\"yes\",\"regionId\":1}"));
        when(repository.findCity(eq(4L), anyString())).thenThrow(AppError.unavailable());
        when(repository.findRegion(anyLong())).thenReturn(null);
        when(repository.findRegion(1L)).thenReturn(json("{\"name.cs\":\"Plzeňský kraj\",\"name.en\":\"\"}"));
    }

    private static ObjectNode json(String text) {
        return (ObjectNode) MAPPER.readTree(text);
    }

    private HttpResponse<String> send(String method, String target) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + target))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private void assertAnswer(String method, String target, int status, String body) throws Exception {
        HttpResponse<String> response = send(method, target);
        assertEquals(status, response.statusCode(), target);
        assertEquals(
                "application/json",
                response.headers().firstValue("Content-Type").orElse(""),
                target);
        assertEquals(body, response.body(), target);
    }

    @Test
    void cityInItsLanguage() throws Exception {
        assertAnswer(
                "GET",
                "/city/v1/get?id=1&language=cs",
                200,
                "{\"countryIso\":\"CZ\",\"id\":1,\"isFeatured\":true,\"name\":\"Plzeň\",\"regionName\":\"Plzeňský kraj\"}");
    }

    @Test
    void theContractsChecksInOrder() throws Exception {
        assertAnswer("GET", "/city/v1/get?id=7&language=cs", 404, "{\"message\":\"Not Found: City#7 not found.\"}");
        assertAnswer(
                "GET",
                "/city/v1/get?id=1&language=en",
                500,
                "{\"message\":\"Internal Server Error: City#1 has no name in 'en'.\"}");
        assertAnswer(
                "GET",
                "/city/v1/get?id=2&language=cs",
                500,
                "{\"message\":\"Internal Server Error: Region#99 of City#2 not found.\"}");
        assertAnswer(
                "GET",
                "/city/v1/get?id=3&language=cs",
                500,
                "{\"message\":\"Internal Server Error: City#3 is malformed.\"}");
        assertAnswer(
                "GET",
                "/city/v1/get?id=4&language=cs",
                503,
                "{\"message\":\"Service Unavailable: search backend unavailable.\"}");
        assertAnswer(
                "GET",
                "/city/v1/get?language=xx&id=%C3%28",
                400,
                "{\"message\":\"Bad Request: parameter 'id' must be an integer from 1 to 9223372036854775807;"
                        + " parameter 'language' must be one of: cs, de, en, pl, sk\"}");
    }

    @Test
    void pathsMatchExactlyAsSent() throws Exception {
        for (String path :
                new String[] {"/city/v1/get/", "/City/v1/get", "/city/v1/%67et", "/city/v1/./get", "/error"}) {
            assertAnswer("GET", path + "?id=1&language=cs", 404, "{\"message\":\"Not Found: no such resource.\"}");
        }
    }

    @Test
    void otherMethodsOnAListedPath() throws Exception {
        for (String method : new String[] {"POST", "DELETE", "OPTIONS", "PATCH", "TRACE", "FOO"}) {
            HttpResponse<String> response = send(method, "/city/v1/get?id=1&language=cs");
            assertEquals(405, response.statusCode(), method);
            assertEquals("GET, HEAD", response.headers().firstValue("Allow").orElse(""), method);
            assertEquals("{\"message\":\"Method Not Allowed: use GET.\"}", response.body(), method);
        }
        assertAnswer("POST", "/nope", 404, "{\"message\":\"Not Found: no such resource.\"}");
    }

    @Test
    void longTargetsAre414() throws Exception {
        String target = "/city/v1/get?id=1&language=cs&pad=" + "a".repeat(8192);
        assertAnswer("GET", target, 414, "{\"message\":\"URI Too Long: request target exceeds 8192 bytes.\"}");
    }

    @Test
    void headIsGetWithoutTheBody() throws Exception {
        HttpResponse<String> response = send("HEAD", "/health");
        assertEquals(200, response.statusCode());
        assertEquals("", response.body());
        assertAnswer("GET", "/health", 200, "{\"status\":\"UP\"}");
        HttpResponse<String> html = CLIENT.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .header("Accept", "text/html")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(406, html.statusCode(), html.body());
        assertEquals(
                "application/json", html.headers().firstValue("Content-Type").orElse(""));
    }

    @Test
    void metricsCountRequestsWithMicrometersLabels() throws Exception {
        send("GET", "/city/v1/get?id=1&language=cs");
        send("FOO", "/city/v1/get");
        send("GET", "/nope");
        HttpResponse<String> response = send("GET", "/metrics");
        assertEquals(
                "text/plain;version=0.0.4;charset=utf-8",
                response.headers().firstValue("Content-Type").orElse(""));
        String metrics = response.body();
        assertTrue(metrics.contains("# TYPE http_server_requests_seconds histogram"), metrics);
        assertTrue(
                metrics.lines()
                        .anyMatch(line -> line.startsWith("http_server_requests_seconds_bucket{")
                                && line.contains("method=\"GET\"")
                                && line.contains("status=\"200\"")
                                && line.contains("uri=\"/city/v1/get\"")),
                metrics);
        assertTrue(
                metrics.contains("method=\"UNKNOWN\",outcome=\"CLIENT_ERROR\",status=\"405\",uri=\"/city/v1/get\""),
                metrics);
        assertTrue(metrics.contains("status=\"404\",uri=\"NOT_FOUND\""), metrics);
        assertTrue(
                metrics.lines()
                        .filter(line -> !line.startsWith("#"))
                        .allMatch(line -> line.startsWith("http_server_requests_seconds_")),
                "only the request histogram");
    }
}
