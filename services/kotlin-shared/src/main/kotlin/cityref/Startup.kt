package cityref

import org.slf4j.LoggerFactory
import java.util.concurrent.ExecutionException
import java.util.concurrent.FutureTask
import kotlin.system.exitProcess

// Lazy: `healthcheck` mode exits before anything is logged, without configuring logback.
private val log by lazy { LoggerFactory.getLogger("cityref") }

/** The startup round-trip never waits longer than this (the spec: min(ELASTICSEARCH_TIMEOUT_MS, 10000) ms). */
const val STARTUP_CHECK_MAX_MS = 10_000L

/**
 * Both services' startup around their [run]: the health check mode; the `config` phase (an invalid
 * variable: one `error` line naming it, exit 1; else logback configured at `LOG_LEVEL` before
 * anything logs, and with `OTEL_TRACES_EXPORTER=otlp` the SDK, [Tracing]); then [run], the startup
 * check under way beside it ([Startup]). A failure to start exits 1 (never linger half-started).
 */
fun serve(
    args: Array<String>,
    run: (Startup) -> Unit,
) {
    if (args.contentEquals(arrayOf("healthcheck"))) exitProcess(HealthCheck.run())
    val phases = StartupPhases()
    try {
        val config = phases.time("config", ::configure)
        // Tracing on: the SDK, built with the configuration (its time is the `config` phase's).
        val tracing = if (config.tracing) phases.time("config", Tracing::fromEnvironment) else null
        run(Startup(config, tracing, phases))
    } catch (e: Throwable) {
        log.error("startup failed", e)
        exitProcess(1)
    }
}

private fun configure(): Config {
    val config =
        try {
            loadConfig()
        } catch (e: ConfigException) {
            log.atError().addKeyValue("variable", e.variable).log("invalid configuration: {}", e.message)
            exitProcess(1)
        }
    // logback configures itself (logback.xml) on SLF4J's first use: here, before the startup's
    // threads log at once, which SLF4J would otherwise buffer and replay with a warning.
    LoggerFactory.getILoggerFactory()
    return config
}

/**
 * A startup under way: the [config], the [tracing] SDK if on, the phases' durations, and the spec's
 * startup check off the main thread (the client built, `elasticsearch_client`, then its one
 * round-trip, `health_check`, within min(ELASTICSEARCH_TIMEOUT_MS, [STARTUP_CHECK_MAX_MS]) ms) while
 * the main thread builds the server and then, before it starts it, calls [awaitElasticsearch].
 */
class Startup internal constructor(
    val config: Config,
    /** The OpenTelemetry SDK when tracing is on (`OTEL_TRACES_EXPORTER=otlp`), else null. */
    val tracing: Tracing?,
    private val phases: StartupPhases,
) {
    private val check =
        FutureTask {
            val client = phases.time("elasticsearch_client") { Elasticsearch(config, tracing) }
            val timeoutMs = minOf(config.elasticsearchTimeoutMs, STARTUP_CHECK_MAX_MS)
            runCatching { phases.time("health_check") { client.checkHealth(timeoutMs) } }.map { client }
        }

    init {
        Thread.ofPlatform().name("startup-check").start(check)
    }

    /** Runs [block] as (a part of) the phase [name]: `server` is the server's setup and its start. */
    fun <T> time(
        name: String,
        block: () -> T,
    ): T = phases.time(name, block)

    /** The client once the round-trip succeeded; else the spec's `error` line (redacted URL, failure) and exit 1. */
    fun awaitElasticsearch(): Elasticsearch {
        val result =
            try {
                check.get()
            } catch (e: ExecutionException) {
                throw e.cause ?: e
            }
        return result.getOrElse { e ->
            log
                .atError()
                .addKeyValue("url", config.redactedElasticsearchUrl)
                .setCause(e)
                .log("Elasticsearch is not reachable at {} (GET /_cluster/health)", config.redactedElasticsearchUrl)
            exitProcess(1)
        }
    }

    /** The listening line: the phases' durations, the port, the processors the JVM sees, the framework's [fields], the redacted URL. */
    fun logListening(fields: List<Pair<String, Any>>) {
        val processors = Runtime.getRuntime().availableProcessors()
        (phases.fields() + listOf("port" to config.port, "available_processors" to processors) + fields)
            .plus("elasticsearch_url" to config.redactedElasticsearchUrl)
            .fold(log.atInfo()) { line, (name, value) -> line.addKeyValue(name, value) }
            .log("listening on port {}", config.port)
    }
}
