package cityref

import java.net.URI

/** The service's configuration, from the environment (spec: "Operation of a service"). */
data class Config(
    val port: Int,
    /** Without credentials; they are in [username] and [password]. */
    val elasticsearchUrl: URI,
    val username: String?,
    val password: String?,
    val elasticsearchTimeoutMs: Int,
    val logLevel: String,
) {
    /** The URL for log lines, the password replaced by `***`. */
    val redactedElasticsearchUrl: String
        get() =
            if (username == null) {
                elasticsearchUrl.toString()
            } else {
                "${elasticsearchUrl.scheme}://$username${if (password != null) ":***" else ""}@" +
                    "${elasticsearchUrl.rawAuthority}${elasticsearchUrl.rawPath ?: ""}"
            }
}

/** An invalid variable. The message never repeats the value (it may hold a password). */
class ConfigException(
    val variable: String,
    message: String,
) : Exception(message)

val LOG_LEVELS = listOf("error", "warn", "info", "debug")

/** Reads and validates every variable; a variable that is set but empty is invalid, not defaulted. */
fun loadConfig(env: Map<String, String> = System.getenv()): Config {
    fun value(
        name: String,
        default: String,
    ) = env[name] ?: default

    fun String.digitsOnly() = isNotEmpty() && all { it in '0'..'9' }

    val port =
        value("PORT", "8080").takeIf { it.digitsOnly() && it.length <= 5 }?.toInt()?.takeIf { it in 1..65535 }
            ?: throw ConfigException("PORT", "PORT must be an integer from 1 to 65535")
    val (url, user, password) = elasticsearchUrl(value("ELASTICSEARCH_URL", "http://127.0.0.1:9200"))
    val timeout =
        value("ELASTICSEARCH_TIMEOUT_MS", "2000").takeIf { it.digitsOnly() }?.toIntOrNull()?.takeIf { it >= 1 }
            ?: throw ConfigException("ELASTICSEARCH_TIMEOUT_MS", "ELASTICSEARCH_TIMEOUT_MS must be a positive integer")
    val logLevel =
        value("LOG_LEVEL", "info").takeIf { it in LOG_LEVELS }
            ?: throw ConfigException("LOG_LEVEL", "LOG_LEVEL must be one of: error, warn, info, debug")
    return Config(port, url, user, password, timeout, logLevel)
}

/** An `http`/`https` URL with a host; `user:password@` is split off. */
private fun elasticsearchUrl(raw: String): Triple<URI, String?, String?> {
    val invalid = ConfigException("ELASTICSEARCH_URL", "ELASTICSEARCH_URL must be an http or https URL")
    val uri = runCatching { URI(raw) }.getOrElse { throw invalid }
    val scheme = uri.scheme?.lowercase()
    if (scheme !in setOf("http", "https") || uri.host.isNullOrEmpty() || uri.rawQuery != null || uri.rawFragment != null) {
        throw invalid
    }
    val userInfo = uri.userInfo
    val user = userInfo?.substringBefore(':')
    val password = userInfo?.takeIf { ':' in it }?.substringAfter(':')
    val bare = URI(scheme, null, uri.host, uri.port, uri.path?.ifEmpty { null }, null, null)
    return Triple(bare, user, password)
}
