package cityref

import java.util.concurrent.ConcurrentHashMap

/**
 * Each startup phase's milliseconds for the listening line (`<phase>_ms`, and `startup_ms` from
 * `main()`); phases may overlap. Dockerfiles/README.md's startup budget reads these fields.
 */
class StartupPhases {
    private val origin = System.nanoTime()
    private val phases = ConcurrentHashMap<String, Long>()
    private val order = listOf("config", "elasticsearch_client", "health_check", "server")

    /** Runs [block] as (a part of) the phase [name]: the parts' durations add up. */
    fun <T> time(
        name: String,
        block: () -> T,
    ): T {
        val start = System.nanoTime()
        try {
            return block()
        } finally {
            phases.merge(name, (System.nanoTime() - start) / 1_000_000, Long::plus)
        }
    }

    /** The fields of the log line: each recorded phase, then the whole startup so far. */
    fun fields(): List<Pair<String, Long>> =
        order.mapNotNull { name -> phases[name]?.let { "${name}_ms" to it } } +
            ("startup_ms" to (System.nanoTime() - origin) / 1_000_000)
}
