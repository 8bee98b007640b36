package cityref

/** Longest request target (path and query as sent) answered normally; a longer one is 414. */
const val MAX_REQUEST_TARGET = 8192

/** The listed paths, matched exactly as sent; anything else is 404, whatever the method. */
val LISTED_PATHS = setOf("/city/v1/get", "/health", "/api-docs", "/metrics")

/** The route (histogram label, span's `http.route`): the listed path matched, `""` for any other and a 414. */
fun routeOf(
    path: String,
    target: String,
): String = if (path in LISTED_PATHS && target.length <= MAX_REQUEST_TARGET) path else ""

private val KNOWN_METHODS = setOf("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")

/** The histogram's method: RFC 9110's and PATCH as sent, any other `_OTHER` (OpenTelemetry's rule, the spec's). */
fun methodLabel(method: String): String = if (method in KNOWN_METHODS) method else "_OTHER"

/** The request line (the spec's Logging): logger, message, keys (the descriptors' `logs` defaults), the target cut to 8192 bytes. */
object RequestLine {
    const val LOGGER = "cityref.request"
    const val MESSAGE = "request"
    const val METHOD = "method"
    const val PATH = "path"
    const val STATUS = "status"
    const val DURATION_MS = "duration_ms"

    fun path(target: String): String = target.take(MAX_REQUEST_TARGET)
}
