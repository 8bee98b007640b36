package cityref

import kotlinx.coroutines.runBlocking
import org.slf4j.LoggerFactory
import sun.misc.Signal
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import kotlin.system.exitProcess

// Lazy: `healthcheck` mode exits before anything is logged, without configuring logback.
private val log by lazy { LoggerFactory.getLogger("cityref") }

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
            runBlocking { repository.checkHealth(config.elasticsearchTimeoutMs.coerceAtMost(10_000)) }
        }

    val processors = Runtime.getRuntime().availableProcessors()
    val serverStart = System.nanoTime()
    // Set once the startup check succeeded; Ktor runs the module (below) only in start().
    lateinit var repository: Repository
    val metrics = Metrics()
    val inFlight = AtomicInteger()
    val server = cityrefServer(config.port) { cityref(CityService(repository), metrics, inFlight) }

    // SIGTERM/SIGINT: Ktor's own stop (Transport.kt), then exit 0 as the spec asks (Ktor's JVM
    // shutdown hook alone would stop the server too, but the JVM would exit 143).
    val stopped = CountDownLatch(1)
    val stop = { signal: Signal ->
        log
            .atInfo()
            .addKeyValue("signal", signal.name)
            .addKeyValue("in_flight", inFlight.get())
            .log("shutting down")
        server.stop()
        stopped.countDown()
    }
    Signal.handle(Signal("TERM")) { Thread({ stop(it) }, "shutdown").start() }
    Signal.handle(Signal("INT")) { Thread({ stop(it) }, "shutdown").start() }

    phases.record("server", serverStart)
    repository =
        startupCheck.await().getOrElse { e ->
            log
                .atError()
                .addKeyValue("url", config.redactedElasticsearchUrl)
                .addKeyValue("error", describe(e))
                .log("Elasticsearch is not reachable at {} (GET /_cluster/health)", config.redactedElasticsearchUrl)
            exitProcess(1)
        }
    val serverListen = System.nanoTime()
    server.start(wait = false)
    phases.record("server", serverListen)
    val engine = server.engineConfig
    phases
        .fields()
        .fold(log.atInfo()) { line, (name, ms) -> line.addKeyValue(name, ms) }
        .addKeyValue("port", config.port)
        .addKeyValue("available_processors", processors)
        .addKeyValue("connection_group_size", engine.connectionGroupSize)
        .addKeyValue("worker_group_size", engine.workerGroupSize)
        .addKeyValue("call_group_size", engine.callGroupSize)
        .addKeyValue("elasticsearch_url", config.redactedElasticsearchUrl)
        .log("listening on port {}", config.port)

    stopped.await()
    repository.close()
    log.info("stopped")
    exitProcess(0)
}
