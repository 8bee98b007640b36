package cityref

import java.io.IOException
import java.net.ConnectException
import java.util.concurrent.ExecutionException
import kotlin.test.Test
import kotlin.test.assertEquals

class AppErrorTest {
    @Test
    fun describeSkipsACauseTheTextAlreadyHolds() =
        assertEquals(
            "ExecutionException: java.net.ConnectException: Connection refused",
            describe(ExecutionException(ConnectException("Connection refused"))),
        )

    @Test
    fun describeJoinsEachNewCause() =
        assertEquals(
            "IOException: request failed: IllegalStateException",
            describe(IOException("request failed", IllegalStateException())),
        )

    @Test
    fun describeStopsAtTenThrowables() {
        val chain = (1..12).fold(null as Throwable?) { cause, n -> IllegalStateException("e$n", cause) }!!
        assertEquals((12 downTo 3).joinToString(": ") { "IllegalStateException: e$it" }, describe(chain))
    }

    @Test
    fun theTableAsStatusAndMessage() {
        assertEquals(400 to "Bad Request: a; b", AppError.BadRequest(listOf("a", "b")).let { it.status to it.message })
        assertEquals(414, AppError.UriTooLong.status)
        assertEquals(431, AppError.HeaderFieldsTooLarge.status)
        assertEquals(503 to "Service Unavailable: search backend unavailable.", AppError.Unavailable.let { it.status to it.message })
        assertEquals(504 to "Gateway Timeout: search backend timed out.", AppError.Timeout.let { it.status to it.message })
    }
}
