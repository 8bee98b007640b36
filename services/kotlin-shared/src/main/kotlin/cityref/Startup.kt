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
 * The startup both services share around their own [run] (the server): the health check mode
 * (`healthcheck`: exit 0 or 1); then the `config` phase (an invalid variable: one `error` line naming
 * it, exit 1; else logging configured, at `LOG_LEVEL` (logback.xml), before anything else may log:
 * SLF4J binds its provider once, on first use; with `OTEL_TRACES_EXPORTER=otlp`, the OpenTelemetry SDK, [Tracing]); then [run], with the startup check under way beside it ([Startup]). A failure
 * to start exits 1: never linger half-started (the Elasticsearch client's threads would keep the JVM
 * alive).
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
 * A startup under way: the [config], the [tracing] SDK if on, each phase's duration ([StartupPhases]), and the spec's startup
 * check, off the main thread: the Elasticsearch client is built (phase `elasticsearch_client`), then
 * makes the one round-trip (`health_check`), waiting at most min(ELASTICSEARCH_TIMEOUT_MS,
 * [STARTUP_CHECK_MAX_MS]) ms, while the main thread builds the server. The spec only requires the
 * round-trip before listening, so the main thread calls [awaitElasticsearch] before it starts the
 * server. After a failed check the service exits, so the client is left as it is (closing it could
 * wait on the request that timed out).
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

    /**
     * The client once the round-trip succeeded; after a failed one the spec's `error` line (the URL,
     * password redacted, and the failure) and exit 1. Throws if the client could not be built.
     */
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
                .addKeyValue("error", describe(e))
                .log("Elasticsearch is not reachable at {} (GET /_cluster/health)", config.redactedElasticsearchUrl)
            exitProcess(1)
        }
    }

    /**
     * The listening line: each startup phase's duration (Dockerfiles/README.md, startup budget), the
     * port (the spec), the processors the JVM sees (it follows the CPU quota), the framework's own
     * thread counts in [fields], and the redacted Elasticsearch URL.
     */
    fun logListening(fields: List<Pair<String, Any>>) {
        val processors = Runtime.getRuntime().availableProcessors()
        (phases.fields() + listOf("port" to config.port, "available_processors" to processors) + fields)
            .plus("elasticsearch_url" to config.redactedElasticsearchUrl)
            .fold(log.atInfo()) { line, (name, value) -> line.addKeyValue(name, value) }
            .log("listening on port {}", config.port)
    }
}
