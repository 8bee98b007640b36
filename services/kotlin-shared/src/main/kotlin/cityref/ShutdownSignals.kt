package cityref

import org.slf4j.LoggerFactory
import sun.misc.Signal
import java.util.concurrent.CountDownLatch
import kotlin.system.exitProcess

/**
 * SIGTERM and SIGINT handled by the service itself, so that it stops gracefully and exits 0 (the
 * spec); the JVM's default would run the shutdown hooks (Ktor's stops the server too) and exit 143.
 * At each signal [stop] (the framework's own stop, which lets requests in flight finish as far as
 * the framework does) runs on a thread of its own; [awaitThenExit] waits for it on the main thread.
 */
class ShutdownSignals(
    stop: (Signal) -> Unit,
) {
    private val stopped = CountDownLatch(1)

    init {
        for (name in listOf("TERM", "INT")) {
            Signal.handle(Signal(name)) { signal ->
                Thread.ofPlatform().name("shutdown").start {
                    stop(signal)
                    stopped.countDown()
                }
            }
        }
    }

    /**
     * Once the server has stopped: [client] closed, the tracer provider shut down if tracing is on
     * (the spans of the requests served are exported), a `stopped` line, exit 0.
     */
    fun awaitThenExit(
        client: AutoCloseable,
        tracing: Tracing?,
    ): Nothing {
        stopped.await()
        client.close()
        tracing?.close()
        LoggerFactory.getLogger("cityref").info("stopped")
        exitProcess(0)
    }
}
