package cityref

import org.http4k.server.ServerConfig.StopMode
import org.http4k.server.asServer
import org.slf4j.LoggerFactory
import sun.misc.Signal
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.system.exitProcess

// Lazy: `healthcheck` mode exits before anything is logged, without configuring logback.
private val log by lazy { LoggerFactory.getLogger("cityref") }

/** SIGTERM/SIGINT: requests in flight get this long to finish (the spec: exit within 15 s). */
private val SHUTDOWN_GRACE: Duration = Duration.ofSeconds(10)

/** The startup round-trip never takes longer than this (the spec: exit within 15 s). */
private const val STARTUP_CHECK_MAX_MS = 10_000L

fun main(args: Array<String>) {
    if (args.contentEquals(arrayOf("healthcheck"))) exitProcess(HealthCheck.run())
    val phases = StartupPhases()
    try {
        run(phases)
    } catch (e: Throwable) {
        // Never linger half-started: the Elasticsearch client's threads would keep the JVM alive.
        log.error("startup failed", e)
        exitProcess(1)
    }
}

private fun run(phases: StartupPhases) {
    // Logging is set up here, before the startup check's thread may log: SLF4J binds its provider
    // once, on first use.
    val config =
        phases.time("config") {
            val config =
                try {
                    loadConfig()
                } catch (e: ConfigException) {
                    log.atError().addKeyValue("variable", e.variable).log("invalid configuration: {}", e.message)
                    exitProcess(1)
                }
            applyLogLevel(config.logLevel)
            config
        }

    val startupCheck =
        StartupCheck(phases, { Repository(config) }) { repository ->
            // Not `use`: ExecutorService.close() waits for the task, so a check that timed out would wait
            // for the client's own (ELASTICSEARCH_TIMEOUT_MS) timeout; found by the suite's startup check.
            val executor = Executors.newVirtualThreadPerTaskExecutor()
            try {
                executor
                    .submit(repository::checkHealth)
                    .get(minOf(config.elasticsearchTimeoutMs, STARTUP_CHECK_MAX_MS), TimeUnit.MILLISECONDS)
            } finally {
                executor.shutdownNow()
            }
        }

    val serverStart = System.nanoTime()
    val telemetry = Telemetry()
    val lookup = DeferredLookup()
    val app = cityrefApp(CityService(lookup), telemetry)
    val stopMode = StopMode.Graceful(SHUTDOWN_GRACE)
    // Jetty with virtual threads: the backend and thread choice are measured in README.md.
    val serverConfig = CityrefJetty(config.port, stopMode, telemetry, virtualThreads = true)
    val server = app.asServer(serverConfig)
    phases.record("server", serverStart)
    val repository =
        startupCheck.await().getOrElse { e ->
            log
                .atError()
                .addKeyValue("url", config.redactedElasticsearchUrl)
                .addKeyValue("error", describe(e))
                .log("Elasticsearch is not reachable at {} (GET /_cluster/health)", config.redactedElasticsearchUrl)
            exitProcess(1)
        }
    lookup.target = repository
    val serverListen = System.nanoTime()
    server.start()
    phases.record("server", serverListen)

    val stopped = CountDownLatch(1)
    val stop = { signal: Signal ->
        log.atInfo().addKeyValue("signal", signal.name).log("shutting down")
        server.stop() // Jetty: stop accepting, let requests in flight finish (up to SHUTDOWN_GRACE)
        stopped.countDown()
    }
    Signal.handle(Signal("TERM")) { Thread.ofPlatform().name("shutdown").start { stop(it) } }
    Signal.handle(Signal("INT")) { Thread.ofPlatform().name("shutdown").start { stop(it) } }

    phases
        .fields()
        .fold(log.atInfo()) { line, (name, ms) -> line.addKeyValue(name, ms) }
        .addKeyValue("port", config.port)
        .addKeyValue("available_processors", Runtime.getRuntime().availableProcessors())
        .addKeyValue(
            "virtual_thread_carriers",
            System.getProperty("jdk.virtualThreadScheduler.parallelism")?.toIntOrNull() ?: Runtime.getRuntime().availableProcessors(),
        ).addKeyValue("jetty_threads", serverConfig.threadPool.threads)
        .addKeyValue("jetty_selectors", serverConfig.selectors)
        .addKeyValue("elasticsearch_url", config.redactedElasticsearchUrl)
        .log("listening on port {}", config.port)

    stopped.await()
    repository.close()
    log.info("stopped")
    exitProcess(0)
}

/** The handler's lookup, built before the startup check has its client: set once, before the server listens. */
private class DeferredLookup : CityLookup {
    @Volatile
    lateinit var target: CityLookup

    override fun findCity(
        id: Long,
        language: String,
    ): Source? = target.findCity(id, language)

    override fun findRegion(id: Long): Source? = target.findRegion(id)
}
