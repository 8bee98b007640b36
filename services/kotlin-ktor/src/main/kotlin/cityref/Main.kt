package cityref

import io.ktor.server.engine.connector
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import io.netty.channel.Channel
import io.netty.channel.ChannelHandler
import io.netty.channel.ChannelHandlerContext
import io.netty.channel.ChannelInboundHandlerAdapter
import kotlinx.coroutines.runBlocking
import org.slf4j.LoggerFactory
import sun.misc.Signal
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import kotlin.system.exitProcess

// Lazy: `healthcheck` mode exits before anything is logged, without configuring logback.
private val log by lazy { LoggerFactory.getLogger("cityref") }

/** SIGTERM/SIGINT: wait up to DRAIN for requests in flight, then stop the engine (the spec: exit within 15 s). */
private const val SHUTDOWN_DRAIN_MS = 10_000L
private const val SHUTDOWN_GRACE_MS = 200L
private const val SHUTDOWN_TIMEOUT_MS = 3_000L

/**
 * Netty's decoder limits (defaults 4096 and 8192): a request line and a header section of up to
 * 64 KiB each are read, so that targets up to that length reach the application's JSON 414.
 */
private const val MAX_INITIAL_LINE = 65536
private const val MAX_HEADER_SIZE = 65536

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
    // The listening channels, so that shutdown can stop accepting first and then wait for the
    // requests in flight: Netty's graceful event-loop shutdown closes open connections at once.
    val listeners = CopyOnWriteArrayList<Channel>()
    val server =
        embeddedServer(Netty, configure = {
            connector {
                host = "0.0.0.0"
                port = config.port
            }
            maxInitialLineLength = MAX_INITIAL_LINE
            maxHeaderSize = MAX_HEADER_SIZE
            configureBootstrap = { handler(ListenerCapture(listeners)) }
            // The contract's JSON for requests Netty's decoder cannot read, right after Ktor's
            // `codec` handler (CodecErrors, Transport.kt).
            channelPipelineConfig = { addAfter("codec", "codec-errors", CodecErrors(metrics)) }
            // Calls run on the worker event loop that read them, not on a separate call group: one
            // thread hop less per request (Ktor's `shareWorkGroup`; README.md, profile).
            shareWorkGroup = true
            shutdownGracePeriod = SHUTDOWN_GRACE_MS
            shutdownTimeout = SHUTDOWN_TIMEOUT_MS
        }) {
            cityref(CityService(repository), metrics, inFlight)
        }

    val stopped = CountDownLatch(1)
    val stop = { signal: Signal ->
        log
            .atInfo()
            .addKeyValue("signal", signal.name)
            .addKeyValue("in_flight", inFlight.get())
            .log("shutting down")
        listeners.forEach { it.close().syncUninterruptibly() }
        val deadline = System.nanoTime() + SHUTDOWN_DRAIN_MS * 1_000_000
        while (inFlight.get() > 0 && System.nanoTime() < deadline) Thread.sleep(10)
        server.stop(SHUTDOWN_GRACE_MS, SHUTDOWN_TIMEOUT_MS)
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

/** Parent-channel handler of the server bootstrap: remembers each listening channel. */
@ChannelHandler.Sharable
private class ListenerCapture(
    private val listeners: MutableList<Channel>,
) : ChannelInboundHandlerAdapter() {
    override fun handlerAdded(ctx: ChannelHandlerContext) {
        listeners += ctx.channel()
    }
}
