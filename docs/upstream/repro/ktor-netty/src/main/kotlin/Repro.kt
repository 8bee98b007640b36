// Ktor alone: embeddedServer(Netty) with four GET routes and nothing else, stopped by SIGTERM with
// Ktor's own stop(). Run by repro.sh: java -cp '<classes>:<libs>/*' ReproKt <port>
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import io.ktor.server.response.respondText
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import kotlinx.coroutines.delay
import sun.misc.Signal
import kotlin.system.exitProcess

fun main(args: Array<String>) {
    val server =
        embeddedServer(Netty, port = args[0].toInt(), host = "127.0.0.1") {
            routing {
                get("/") { call.respondText("hello\n") }
                // The handler never reads the query.
                get("/ignores-query") { call.respondText("the handler ran\n") }
                // A call that waits 0.2 s before it answers (as one waiting for a backend would).
                get("/wait") {
                    delay(200)
                    call.respondText("waited\n")
                }
                // A call in flight for 3 s (as one waiting for a backend would be).
                get("/slow") {
                    delay(3000)
                    call.respondText("slow answer\n")
                }
            }
        }
    server.start(wait = false)
    println("listening on ${args[0]}")
    Signal.handle(Signal("TERM")) {
        Thread {
            server.stop() // Ktor's defaults: 1 s grace period, 5 s timeout
            println("stopped")
            exitProcess(0)
        }.start()
    }
    Thread.currentThread().join()
}
