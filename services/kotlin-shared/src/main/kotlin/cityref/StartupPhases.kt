package cityref

import java.util.concurrent.ConcurrentHashMap

/**
 * How long each startup phase took, in milliseconds from `main()` (System.nanoTime), for the
 * "listening" log line: `<phase>_ms` per phase and `startup_ms` from `main()` to listening.
 * Phases may overlap (the startup check runs while the server is built), so they need not add up
 * to `startup_ms`. Dockerfiles/README.md's startup budget is read from these fields.
 */
class StartupPhases {
    private val origin = System.nanoTime()
    private val phases = ConcurrentHashMap<String, Long>()
    private val order = listOf("config", "elasticsearch_client", "health_check", "server")

    /** Runs [block] as the phase [name] and records its duration. */
    fun <T> time(
        name: String,
        block: () -> T,
    ): T {
        val start = System.nanoTime()
        try {
            return block()
        } finally {
            record(name, start)
        }
    }

    /** Adds the time from [start] (a System.nanoTime) to now to the phase [name] (a phase may come in parts). */
    fun record(
        name: String,
        start: Long,
    ) {
        phases.merge(name, (System.nanoTime() - start) / 1_000_000, Long::plus)
    }

    /** The fields of the log line: each recorded phase, then the whole startup so far. */
    fun fields(): List<Pair<String, Long>> =
        order.mapNotNull { name -> phases[name]?.let { "${name}_ms" to it } } +
            ("startup_ms" to (System.nanoTime() - origin) / 1_000_000)
}
