package cityref;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webclient.http1.Http1Client;
import io.helidon.webclient.http1.Http1ClientResponse;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.helidon.webserver.testing.junit5.SetUpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

@ServerTest
class TransportTest {
    private static final JsonMapper MAPPER = new JsonMapper();
    private static final AtomicInteger REGION_LOOKUPS = new AtomicInteger();

    private final Http1Client client;
    private final int port;

    TransportTest(Http1Client client, WebServer server) {
        this.client = client;
        this.port = server.port();
    }

    /** City 1 (region 1), city 2 with a missing region, city 3 malformed, city 4 unavailable backend. */
    private static final CityLookup FAKE = new CityLookup() {
        @Override
        public ObjectNode findCity(long id, String language) {
            return switch ((int) id) {
                case 1 ->
                    json("{\"id\":1,\"countryIso\":\"CZ\",\"isFeatured\":true,\"regionId\":1,\"name.cs\":\"Plzeň\"}");
                case 2 ->
                    json("{\"id\":2,\"countryIso\":\"CZ\",\"isFeatured\":false,\"regionId\":99,\"name.cs\":\"X\"}");
                case 3 -> json("{\"id\":3,\"countryIso\":\"CZ\",\"isFeatured\":\"yes\",\"regionId\":1}");
                case 4 -> throw AppError.unavailable();
                default -> null;
            };
        }

        @Override
        public ObjectNode findRegion(long id) {
            REGION_LOOKUPS.incrementAndGet();
            return id == 1 ? json("{\"name.cs\":\"Plzeňský kraj\",\"name.en\":\"\"}") : null;
        }
    };

    private static ObjectNode json(String text) {
        try {
            return (ObjectNode) MAPPER.readTree(text);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The server as Main configures it, routing on the fake backend. */
    @SetUpServer
    static void server(WebServerConfig.Builder server) {
        Telemetry telemetry = new Telemetry();
        Transport.server(server, io.helidon.config.Config.create().get("server"), telemetry, null)
                .port(0)
                .routing(routing -> Transport.routing(routing, new CityService(FAKE), telemetry, null));
    }

    private static void assertResponse(Http1ClientResponse response, int status, String body) {
        try (response) {
            assertEquals(status, response.status().code());
            assertEquals(
                    "application/json",
                    response.headers().get(HeaderNames.CONTENT_TYPE).get());
            assertEquals(body, response.as(String.class));
        }
    }

    @Test
    void city() {
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "1")
                        .queryParam("language", "cs")
                        .request(),
                200,
                "{\"countryIso\":\"CZ\",\"id\":1,\"isFeatured\":true,\"name\":\"Plzeň\",\"regionName\":\"Plzeňský kraj\"}");
    }

    @Test
    void checksInOrder() {
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "9")
                        .queryParam("language", "cs")
                        .request(),
                404,
                "{\"message\":\"Not Found: City#9 not found.\"}");
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "3")
                        .queryParam("language", "cs")
                        .request(),
                500,
                "{\"message\":\"Internal Server Error: City#3 is malformed.\"}");
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "1")
                        .queryParam("language", "de")
                        .request(),
                500,
                "{\"message\":\"Internal Server Error: City#1 has no name in 'de'.\"}");
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "2")
                        .queryParam("language", "cs")
                        .request(),
                500,
                "{\"message\":\"Internal Server Error: Region#99 of City#2 not found.\"}");
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "4")
                        .queryParam("language", "cs")
                        .request(),
                503,
                "{\"message\":\"Service Unavailable: search backend unavailable.\"}");
    }

    @Test
    void badRequest() {
        assertResponse(
                client.get("/city/v1/get")
                        .queryParam("id", "0")
                        .queryParam("language", "xx")
                        .request(),
                400,
                "{\"message\":\"Bad Request: parameter 'id' must be an integer from 1 to 9223372036854775807; "
                        + "parameter 'language' must be one of: cs, de, en, pl, sk\"}");
    }

    @Test
    void health() {
        assertResponse(client.get("/health").request(), 200, "{\"status\":\"UP\"}");
    }

    @Test
    void unknownPathAnyMethod() {
        assertResponse(client.get("/nope").request(), 404, "{\"message\":\"Not Found: no such resource.\"}");
        assertResponse(
                client.method(Method.DELETE).path("/health/").request(),
                404,
                "{\"message\":\"Not Found: no such resource.\"}");
    }

    @Test
    void methodNotAllowed() {
        try (Http1ClientResponse response =
                client.post("/city/v1/get").queryParam("id", "0").request()) {
            assertEquals(405, response.status().code());
            assertEquals("GET, HEAD", response.headers().get(HeaderNames.ALLOW).get());
            assertEquals("{\"message\":\"Method Not Allowed: use GET.\"}", response.as(String.class));
        }
    }

    @Test
    void headIsGetWithoutBody() {
        try (Http1ClientResponse response = client.head("/health").request()) {
            assertEquals(200, response.status().code());
            assertEquals(
                    "15", response.headers().get(HeaderNames.CONTENT_LENGTH).get());
        }
    }

    @Test
    void uriTooLong() {
        assertResponse(
                client.get("/health").queryParam("pad", "a".repeat(8192)).request(),
                414,
                "{\"message\":\"URI Too Long: request target exceeds 8192 bytes.\"}");
    }

    @Test
    void metrics() {
        client.get("/health").request().close();
        try (Http1ClientResponse response = client.get("/metrics").request()) {
            String text = response.as(String.class);
            assertTrue(text.contains("# TYPE http_server_request_duration_seconds histogram"), text);
            assertTrue(
                    text.contains("http_server_request_duration_seconds_bucket{http_request_method=\"GET\","
                            + "http_response_status_code=\"200\",http_route=\"/health\",le=\"0.005\"}"),
                    text);
        }
    }

    /** Everything the server writes until it closes the connection (or 5 s pass). */
    private String exchange(String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void connectionCloseEndsTheConnection() throws IOException {
        String answer = exchange("GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n"
                + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer);
        assertTrue(answer.contains("\r\nConnection: close\r\n"), answer);
        assertEquals(1, answer.split("HTTP/1.1 ", -1).length - 1, answer); // the second request is never read
    }

    @Test
    void helidonsBadRequestAsJson() throws IOException {
        String answer = exchange("GET  /health HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 400 Bad Request\r\n"), answer);
        assertTrue(answer.endsWith("\r\n\r\n{\"message\":\"Bad Request: malformed request.\"}"), answer);
    }
}
