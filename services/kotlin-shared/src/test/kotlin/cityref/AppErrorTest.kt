package cityref

import kotlin.test.Test
import kotlin.test.assertEquals

class AppErrorTest {
    @Test
    fun causesStopsAtTenThrowables() {
        val chain = (1..12).fold(null as Throwable?) { cause, n -> IllegalStateException("e$n", cause) }!!
        assertEquals((12 downTo 3).map { "e$it" }, chain.causes().map { it.message }.toList())
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
