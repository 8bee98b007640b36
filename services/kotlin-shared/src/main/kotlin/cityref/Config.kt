package cityref

import java.net.URI

/** The service's configuration, from the environment (see the spec, "Operation of a service"). */
data class Config(
    val port: Int,
    /** Without credentials; they are in [username]/[password]. */
    val elasticsearchUrl: URI,
    val username: String?,
    val password: String?,
    val elasticsearchTimeoutMs: Long,
    val logLevel: String,
    /**
     * `OTEL_TRACES_EXPORTER=otlp`: OpenTelemetry tracing on, the SDK configured by its own `OTEL_*`
     * variables ([Tracing]); unset or `none`: off (the spec: off by default, unlike the SDK).
     */
    val tracing: Boolean = false,
) {
    /** The URL for log lines: the password replaced by `xxxxx` (the spec, as Go's `url.URL.Redacted`). */
    val redactedElasticsearchUrl: String
        get() = redact(elasticsearchUrl, username, password)
}

/** An invalid variable; the message never repeats the value (it may hold a password). */
class ConfigException(
    val variable: String,
    message: String,
) : Exception(message)

val LOG_LEVELS = listOf("error", "warn", "info", "debug")

/** `OTEL_TRACES_EXPORTER`'s values: tracing off (the default) or on; anything else is invalid. */
val TRACES_EXPORTERS = mapOf("none" to false, "otlp" to true)

/** Reads and validates every variable (the four of the service and `OTEL_TRACES_EXPORTER`); a variable set but empty is invalid, not defaulted. */
fun loadConfig(env: Map<String, String> = System.getenv()): Config {
    fun value(
        name: String,
        default: String,
    ): String = env[name] ?: default

    /** ASCII digits only (no sign, no space), non-empty, within [range]. */
    fun number(
        name: String,
        default: String,
        range: LongRange,
        rule: String,
    ): Long =
        value(name, default).takeIf { it.isNotEmpty() && it.all { c -> c in '0'..'9' } }?.toLongOrNull()?.takeIf { it in range }
            ?: throw ConfigException(name, "$name must be $rule")

    val port = number("PORT", "8080", 1L..65535, "an integer from 1 to 65535").toInt()
    val url = parseElasticsearchUrl(value("ELASTICSEARCH_URL", "http://127.0.0.1:9200"))
    val timeout = number("ELASTICSEARCH_TIMEOUT_MS", "2000", 1L..Int.MAX_VALUE, "a positive integer")
    val logLevel =
        value("LOG_LEVEL", "info").takeIf { it in LOG_LEVELS }
            ?: throw ConfigException("LOG_LEVEL", "LOG_LEVEL must be one of: error, warn, info, debug")
    val tracing =
        TRACES_EXPORTERS[value("OTEL_TRACES_EXPORTER", "none")]
            ?: throw ConfigException("OTEL_TRACES_EXPORTER", "OTEL_TRACES_EXPORTER must be otlp or none")
    return Config(port, url.first, url.second, url.third, timeout, logLevel, tracing)
}

/** An `http`/`https` URL with a host; `user:password@` is split off (percent-decoded). */
private fun parseElasticsearchUrl(raw: String): Triple<URI, String?, String?> {
    val invalid = { ConfigException("ELASTICSEARCH_URL", "ELASTICSEARCH_URL must be an http or https URL") }
    val uri =
        try {
            URI(raw)
        } catch (_: Exception) {
            throw invalid()
        }
    if (uri.scheme?.lowercase() !in setOf("http", "https") || uri.host.isNullOrEmpty() ||
        uri.rawQuery != null || uri.rawFragment != null
    ) {
        throw invalid()
    }
    val userInfo = uri.userInfo
    val (user, password) =
        when {
            userInfo == null -> null to null
            ':' in userInfo -> userInfo.substringBefore(':') to userInfo.substringAfter(':')
            else -> userInfo to null
        }
    val bare = URI(uri.scheme.lowercase(), null, uri.host, uri.port, uri.path?.ifEmpty { null }, null, null)
    return Triple(bare, user, password)
}

private fun redact(
    url: URI,
    user: String?,
    password: String?,
): String {
    if (user == null) return url.toString()
    val auth = if (password != null) "$user:xxxxx" else user
    return "${url.scheme}://$auth@${url.rawAuthority}${url.rawPath ?: ""}"
}
