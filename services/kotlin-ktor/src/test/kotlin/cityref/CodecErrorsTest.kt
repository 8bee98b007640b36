package cityref

import io.netty.buffer.ByteBuf
import io.netty.buffer.Unpooled
import io.netty.channel.ChannelHandlerContext
import io.netty.channel.ChannelInboundHandlerAdapter
import io.netty.channel.embedded.EmbeddedChannel
import io.netty.handler.codec.http.DefaultFullHttpResponse
import io.netty.handler.codec.http.HttpRequest
import io.netty.handler.codec.http.HttpResponseStatus
import io.netty.handler.codec.http.HttpServerCodec
import io.netty.handler.codec.http.HttpVersion
import io.netty.util.ReferenceCountUtil
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

/** [CodecErrors] between Netty's codec and a stand-in for Ktor that answers when told to. */
class CodecErrorsTest {
    private class App : ChannelInboundHandlerAdapter() {
        val requests = mutableListOf<String>()
        lateinit var ctx: ChannelHandlerContext

        override fun channelRead(
            ctx: ChannelHandlerContext,
            msg: Any,
        ) {
            this.ctx = ctx
            if (msg is HttpRequest) requests += msg.uri()
            ReferenceCountUtil.release(msg)
        }

        fun answer() {
            val response = DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer("ok".toByteArray()))
            response.headers().set("Content-Length", 2)
            ctx.writeAndFlush(response)
        }
    }

    private val app = App()
    private val channel = EmbeddedChannel(HttpServerCodec(65536, 65536, 8192), CodecErrors(Metrics()), app)

    private fun send(bytes: String) = channel.writeInbound(Unpooled.copiedBuffer(bytes, Charsets.ISO_8859_1))

    private fun written(): String {
        val out = StringBuilder()
        while (true) {
            val buf = channel.readOutbound<ByteBuf>() ?: break
            out.append(buf.toString(Charsets.ISO_8859_1))
            buf.release()
        }
        return out.toString()
    }

    private val malformed =
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 45\r\nConnection: close\r\n\r\n" +
            """{"message":"Bad Request: malformed request."}"""

    @Test
    fun malformedRequestIsAnsweredAndClosed() {
        send("GET /health HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
        assertEquals(malformed, written())
        assertFalse(channel.isOpen)
        assertEquals(emptyList(), app.requests)
    }

    @Test
    fun refusalWaitsForTheAnswersBeforeIt() {
        send("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n")
        assertEquals(listOf("/first"), app.requests)
        assertEquals("", written())
        assertTrue(channel.isOpen)
        app.answer()
        assertEquals("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok$malformed", written())
        assertFalse(channel.isOpen)
    }

    @Test
    fun overLongHeadIsAJson431() {
        send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(70_000)}\r\n\r\n")
        val answer = written()
        assertTrue(answer.startsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer)
        assertTrue(answer.endsWith("""{"message":"Request Header Fields Too Large: header section exceeds 65536 bytes."}"""), answer)
        assertFalse(channel.isOpen)
    }

    @Test
    fun hixie76KeysWithoutALengthAreRefused() {
        // Netty would read "GET /nex" as this request's body (HttpUtil.getWebSocketContentLength).
        send(
            "GET /health HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key1: 1\r\nSec-WebSocket-Key2: 2\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        assertEquals(malformed, written())
        assertEquals(emptyList(), app.requests)
        assertFalse(channel.isOpen)
    }

    @Test
    fun wellFormedRequestsPassThrough() {
        send("GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        assertEquals(listOf("/a", "/b"), app.requests)
        assertTrue(channel.isOpen)
    }

    @Test
    fun otherVersionsAreRefused() {
        send("GET /health HTTP/2.0\r\nHost: x\r\n\r\n")
        assertEquals(malformed, written())
        assertFalse(channel.isOpen)
    }

    @Test
    fun nothingIsReadAfterConnectionClose() {
        send("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        assertEquals(listOf("/a"), app.requests)
        app.answer()
        assertFalse(channel.isOpen)
    }
}
