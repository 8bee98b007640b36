package cityref

import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import org.slf4j.LoggerFactory

private val log by lazy { LoggerFactory.getLogger("cityref") }

/** kotlin-shared's [serve]: the health check mode, the configuration, the startup check, then [run]. */
fun main(args: Array<String>) = serve(args, ::run)

/** Ktor's server, built while the startup check runs; it listens once the check has succeeded. */
private fun run(startup: Startup) {
    // Set once the startup check succeeded; Ktor runs the module (below) only in start().
    lateinit var repository: CityRepository
    val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
    val server =
        startup.time("server") {
            cityrefServer(startup.config.port) {
                cityref(CityService(repository), registry, startup.tracing?.openTelemetry)
            }
        }
    // SIGTERM/SIGINT: Ktor's own stop (Transport.kt), then exit 0.
    val shutdown =
        ShutdownSignals { signal ->
            log
                .atInfo()
                .addKeyValue("signal", signal.name)
                .addKeyValue("in_flight", registry.inFlight())
                .log("shutting down")
            server.stop()
        }

    val elasticsearch = startup.awaitElasticsearch()
    repository = CityRepository(elasticsearch)
    startup.time("server") { server.start(wait = false) }
    val engine = server.engineConfig
    startup.logListening(
        listOf(
            "connection_group_size" to engine.connectionGroupSize,
            "worker_group_size" to engine.workerGroupSize,
            "call_group_size" to engine.callGroupSize,
        ),
    )
    shutdown.awaitThenExit(elasticsearch, startup.tracing)
}
