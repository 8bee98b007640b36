package cityref;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The spec's health check mode: {@code GET /health} on 127.0.0.1:{@code PORT} (8080 when unset or
 * invalid), 0 for a 200 within 2 s, else 1. For {@code HEALTHCHECK} in an image with no shell or
 * curl; plain sockets rather than {@code java.net.http.HttpClient}, so that the check's own JVM loads
 * almost nothing besides {@code java.base} (it runs every few seconds in a container).
 */
public final class HealthCheck {
    private static final int TIMEOUT_MS = 2000;

    private HealthCheck() {}

    public static int run() {
        int port = 8080;
        try {
            int p = Integer.parseInt(System.getenv().getOrDefault("PORT", ""));
            if (p >= 1 && p <= 65535) {
                port = p;
            }
        } catch (NumberFormatException e) {
            // the default
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), TIMEOUT_MS);
            socket.setSoTimeout(TIMEOUT_MS);
            socket.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            String head = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            return head.equals("HTTP/1.1 200") ? 0 : 1;
        } catch (IOException e) {
            return 1;
        }
    }
}
