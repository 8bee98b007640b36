/*
 * The AOT training run of the JVM images (JEP 483/514/515, JDK 25), run by the build stage of
 * the Dockerfile of every Java and Kotlin service (Dockerfiles/jvm/build.sh) with the full JDK:
 *
 *   java Train.java <cache> <java> <jvm-args...>
 *
 * starts the service as `<java> -XX:AOTCacheOutput=<cache> <jvm-args...>` with PORT and
 * ELASTICSEARCH_URL pointing at a small in-process stand-in for Elasticsearch (the two endpoints
 * the service calls, answered in Elasticsearch's wire format), sends it a mix of the contract's
 * requests (found cities in every language, 400s, 404s, 405, HEAD, /health, /metrics,
 * /api-docs), then stops it with SIGTERM. The JVM writes the AOT cache when it exits.
 *
 * The stand-in keeps the image build hermetic (a plain `docker build` needs no Elasticsearch and
 * no network); it only shapes what the cache holds. The images themselves are tested against the
 * real Elasticsearch by `make test-images`.
 */

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Train {
    static final int CITIES = 5; // ids 1..5 exist, each in the region with the same id
    static final int ROUNDS = 300;
    static final String[] LANGUAGES = {"cs", "de", "en", "pl", "sk"};
    static final Pattern DOC = Pattern.compile("^/([a-z_]+)/_doc/([^/?]+)$");

    public static void main(String[] args) {
        try {
            train(args);
        } catch (Exception e) {
            // Also when the service dies mid-run: the stand-in's server thread must not keep this JVM alive.
            e.printStackTrace();
            fail("the training run broke off: " + e);
        }
    }

    static void train(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: java Train.java <cache> <java> <jvm-args...>");
            System.exit(2);
        }
        Path cache = Path.of(args[0]);
        HttpServer es = elasticsearch();
        es.start();
        int port = freePort();

        List<String> command = new ArrayList<>();
        command.add(args[1]);
        command.add("-XX:AOTCacheOutput=" + cache);
        command.addAll(List.of(args).subList(2, args.length));
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().put("PORT", Integer.toString(port));
        builder.environment().put("ELASTICSEARCH_URL", "http://127.0.0.1:" + es.getAddress().getPort());
        builder.environment().put("LOG_LEVEL", "warn");
        System.err.println("training: " + String.join(" ", command));
        Process service = builder.start();

        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String base = "http://127.0.0.1:" + port;
        waitUntilServing(client, base, service);
        int sent = 0;
        for (int round = 0; round < ROUNDS; round++) {
            for (String language : LANGUAGES) {
                send(client, "GET", base + "/city/v1/get?id=" + (1 + round % CITIES) + "&language=" + language);
                sent++;
            }
            for (String target : List.of(
                    "/city/v1/get?id=404&language=en", "/city/v1/get?id=abc&language=en",
                    "/city/v1/get?language=xx", "/city/v1/get?id=1&id=2&language=en", "/nowhere", "/health")) {
                send(client, "GET", base + target);
                sent++;
            }
            send(client, "HEAD", base + "/city/v1/get?id=1&language=de");
            send(client, "POST", base + "/city/v1/get?id=1&language=de");
            sent += 2;
            if (round % 50 == 0) {
                send(client, "GET", base + "/metrics");
                send(client, "GET", base + "/api-docs");
                sent += 2;
            }
        }
        System.err.println("training: " + sent + " requests sent; stopping the service with SIGTERM");
        service.destroy(); // SIGTERM: the service stops gracefully, then the JVM writes the cache
        if (!service.waitFor(120, TimeUnit.SECONDS)) {
            service.destroyForcibly();
            fail("the service did not stop within 120 s of SIGTERM");
        }
        es.stop(0);
        if (service.exitValue() != 0) fail("the service exited with " + service.exitValue());
        if (!Files.isRegularFile(cache)) fail("no AOT cache written at " + cache);
        System.err.println("training: AOT cache " + cache + ", " + Files.size(cache) + " bytes");
    }

    /** The stand-in: `GET /_cluster/health` and `GET /<alias>/_doc/<id>` (with any parameters). */
    static HttpServer elasticsearch() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            Matcher doc = DOC.matcher(path);
            if (path.equals("/_cluster/health")) {
                reply(exchange, 200, "{\"cluster_name\":\"training\",\"status\":\"green\",\"timed_out\":false,"
                        + "\"number_of_nodes\":1,\"number_of_data_nodes\":1,\"active_primary_shards\":2,"
                        + "\"active_shards\":2,\"relocating_shards\":0,\"initializing_shards\":0,"
                        + "\"unassigned_shards\":0,\"unassigned_primary_shards\":0,\"delayed_unassigned_shards\":0,"
                        + "\"number_of_pending_tasks\":0,\"number_of_in_flight_fetch\":0,"
                        + "\"task_max_waiting_in_queue_millis\":0,\"active_shards_percent_as_number\":100.0}");
            } else if (doc.matches()) {
                String index = doc.group(1) + "_v1";
                String id = doc.group(2);
                int n = id.matches("[1-9][0-9]{0,8}") ? Integer.parseInt(id) : 0;
                if (n < 1 || n > CITIES) {
                    reply(exchange, 404, "{\"_index\":\"" + index + "\",\"_id\":\"" + id + "\",\"found\":false}");
                } else {
                    String source = doc.group(1).equals("city")
                            ? "{\"id\":" + n + ",\"countryIso\":\"CZ\",\"regionId\":" + n + ",\"isFeatured\":" + (n % 2 == 0)
                              + names("City " + n) + "}"
                            : "{\"id\":" + n + ",\"countryIso\":\"CZ\"" + names("Region " + n) + "}";
                    reply(exchange, 200, "{\"_index\":\"" + index + "\",\"_id\":\"" + id + "\",\"_version\":1,"
                            + "\"_seq_no\":0,\"_primary_term\":1,\"found\":true,\"_source\":" + source + "}");
                }
            } else {
                reply(exchange, 404, "{\"error\":\"no handler for " + path + "\",\"status\":404}");
            }
        });
        return server;
    }

    static String names(String name) {
        StringBuilder out = new StringBuilder();
        for (String language : LANGUAGES) out.append(",\"name.").append(language).append("\":\"").append(name).append(" (").append(language).append(")\"");
        return out.toString();
    }

    static void reply(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.getResponseHeaders().set("X-elastic-product", "Elasticsearch");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    static void waitUntilServing(HttpClient client, String base, Process service) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            if (!service.isAlive()) fail("the service exited with " + service.exitValue() + " before serving");
            try {
                if (send(client, "GET", base + "/health") == 200) return;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        service.destroyForcibly();
        fail("the service did not answer /health within 120 s");
    }

    static int send(HttpClient client, String method, String url) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build();
        return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static void fail(String message) {
        System.err.println("training failed: " + message);
        System.exit(1);
    }
}
