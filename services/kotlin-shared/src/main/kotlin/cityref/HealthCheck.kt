package cityref

import java.net.InetSocketAddress
import java.net.Socket

/**
 * The spec's health check mode: `GET /health` on 127.0.0.1:`PORT` (8080 when unset or invalid),
 * 0 for a 200 within 2 s, else 1. For `HEALTHCHECK` in an image with no shell or curl; plain
 * sockets, so that it loads almost nothing besides `java.base`.
 */
object HealthCheck {
    private const val TIMEOUT_MS = 2000

    fun run(): Int {
        val port = System.getenv("PORT")?.toIntOrNull()?.takeIf { it in 1..65535 } ?: 8080
        return try {
            Socket().use { socket ->
                socket.connect(InetSocketAddress("127.0.0.1", port), TIMEOUT_MS)
                socket.soTimeout = TIMEOUT_MS
                socket.getOutputStream().write(
                    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".toByteArray(),
                )
                val head = socket.getInputStream().readNBytes(12).toString(Charsets.US_ASCII)
                if (head == "HTTP/1.1 200") 0 else 1
            }
        } catch (e: java.io.IOException) {
            1
        }
    }
}
