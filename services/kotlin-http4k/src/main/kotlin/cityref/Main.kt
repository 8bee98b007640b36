package cityref

import org.eclipse.jetty.server.ServerConnector
import org.http4k.server.ServerConfig.StopMode
import org.slf4j.LoggerFactory
import java.time.Duration

private val log by lazy { LoggerFactory.getLogger("cityref") }

/** SIGTERM/SIGINT: requests in flight get this long to finish (the spec: exit within 15 s). */
private val SHUTDOWN_GRACE: Duration = Duration.ofSeconds(10)

/** kotlin-shared's [serve]: the health check mode, the configuration, the startup check, then [run]. */
fun main(args: Array<String>) = serve(args, ::run)

/** The app on Jetty, built while the startup check runs; it listens once the check has succeeded. */
private fun run(startup: Startup) {
    val lookup = DeferredLookup()
    val (server, jetty) =
        startup.time("server") {
            val telemetry = Telemetry(startup.tracing?.openTelemetry)
            // Jetty with virtual threads: the backend and thread choice are measured in README.md.
            cityrefServer(cityrefApp(CityService(lookup), telemetry), startup.config.port, StopMode.Graceful(SHUTDOWN_GRACE), telemetry)
        }

    val elasticsearch = startup.awaitElasticsearch()
    lookup.target = CityRepository(elasticsearch)
    startup.time("server") { server.start() }
    val shutdown =
        ShutdownSignals { signal ->
            log.atInfo().addKeyValue("signal", signal.name).log("shutting down")
            server.stop() // Jetty: stop accepting, let requests in flight finish (up to SHUTDOWN_GRACE)
        }
    startup.logListening(
        listOf(
            "virtual_thread_carriers" to
                (System.getProperty("jdk.virtualThreadScheduler.parallelism")?.toIntOrNull() ?: Runtime.getRuntime().availableProcessors()),
            "jetty_threads" to jetty.threadPool.threads,
            "jetty_selectors" to (jetty.connectors.single() as ServerConnector).selectorManager.selectorCount,
        ),
    )
    shutdown.awaitThenExit(elasticsearch, startup.tracing)
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
