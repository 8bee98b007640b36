package cityref;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in for Elasticsearch (a JDK HTTP server on a free port): a green cluster health, city
 * {@code n} in region {@code n} with Czech names; it records each request's {@code traceparent}.
 */
final class ElasticsearchStandIn implements AutoCloseable {
    private static final String HEALTH = "{\"cluster_name\":\"cityref\",\"status\":\"green\",\"timed_out\":false,"
            + "\"number_of_nodes\":1,\"number_of_data_nodes\":1,\"active_primary_shards\":2,\"active_shards\":2,"
            + "\"relocating_shards\":0,\"initializing_shards\":0,\"unassigned_shards\":0,"
            + "\"unassigned_primary_shards\":0,\"delayed_unassigned_shards\":0,\"number_of_pending_tasks\":0,"
            + "\"number_of_in_flight_fetch\":0,\"task_max_waiting_in_queue_millis\":0,"
            + "\"active_shards_percent_as_number\":100.0}";

    private final HttpServer server;
    /** Each document request's path and {@code traceparent} ("null" when it had none). */
    final List<String> traceparents = new CopyOnWriteArrayList<>();

    ElasticsearchStandIn() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String[] path = exchange.getRequestURI().getPath().split("/"); // "", alias, "_doc", id
            String body;
            if (path[1].equals("_cluster")) {
                body = HEALTH;
            } else {
                traceparents.add(String.valueOf(exchange.getRequestHeaders().getFirst("traceparent")));
                String source = path[1].equals("city")
                        ? "{\"id\":" + path[3] + ",\"countryIso\":\"CZ\",\"isFeatured\":true,\"regionId\":" + path[3]
                                + ",\"name.cs\":\"Plzeň\"}"
                        : "{\"name.cs\":\"Plzeňský kraj\"}";
                body = "{\"_index\":\"" + path[1] + "\",\"_id\":\"" + path[3] + "\",\"found\":true,\"_source\":"
                        + source + "}";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.getResponseHeaders().add("X-Elastic-Product", "Elasticsearch");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    /** {@link #ElasticsearchStandIn()} for a static field: an I/O failure is unchecked. */
    static ElasticsearchStandIn start() {
        try {
            return new ElasticsearchStandIn();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
