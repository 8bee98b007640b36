package cityref

import io.netty.buffer.ByteBuf
import io.netty.channel.ChannelHandlerContext
import io.netty.channel.ChannelInboundHandlerAdapter
import java.security.SecureRandom
import java.util.HexFormat

/**
 * The contract's HTTP layer ("What the HTTP layer accepts", spec/openapi.yaml) on each connection,
 * before Netty's `HttpServerCodec` decodes it.
 *
 * Netty's decoder answers what it cannot parse with its own plain-text 400 through Ktor (often
 * without closing), waits forever on `HTTP/2.0` or `HTTP/0.9` request lines, and accepts what the
 * contract calls malformed (tabs and double spaces in the request line, control bytes in the
 * target, obs-fold lines, bare-LF line ends). Its settings cover none of this, so [Wire] is the
 * first handler of every channel's pipeline (Ktor's `channelPipelineConfig`): it reads each
 * request head byte by byte and holds it back until it is complete:
 *
 * * a well-formed head goes on as it came, without its framing headers: [Wire] reads and discards
 *   bodies (`Content-Length` and chunked) itself, so a body is never taken for a request;
 * * a target over 8192 bytes goes on cut to its first 8192 bytes and marked (414 on any length);
 * * a malformed head, or one whose header section passes 65536 bytes, is replaced by a stand-in
 *   request (`Connection: close`, marked 400 or 431), and nothing after it is read as a request.
 *
 * Marks are the header `X-Cityref-Wire: <per-process secret> <code>`, answered by the application
 * with the contract's JSON ([wireRefusal]), so they are logged and counted like any other request
 * and stay in order on a pipelined connection. The same scanner as rust-actix's `target_limit.rs`
 * and go-kit's `wire.go`.
 */
class Wire : ChannelInboundHandlerAdapter() {
    private val scanner = WireScanner(SECRET)
    private var handedOn = false

    override fun channelRead(
        ctx: ChannelHandlerContext,
        msg: Any,
    ) {
        if (msg !is ByteBuf) {
            ctx.fireChannelRead(msg)
            return
        }
        val input = ByteArray(msg.readableBytes())
        msg.readBytes(input)
        msg.release()
        val out = scanner.feed(input)
        if (out.isNotEmpty()) {
            handedOn = true
            ctx.fireChannelRead(ctx.alloc().buffer(out.size).writeBytes(out))
        }
    }

    /**
     * Ktor reads on demand (auto-read off) and asks for more only when it has handled what it got;
     * a read that gave it nothing (a head not complete yet, a body being discarded) must ask for
     * the next one itself, as Netty's ByteToMessageDecoder does.
     */
    override fun channelReadComplete(ctx: ChannelHandlerContext) {
        if (!handedOn && !ctx.channel().config().isAutoRead) ctx.read()
        handedOn = false
        ctx.fireChannelReadComplete()
    }

    companion object {
        const val HEADER = "X-Cityref-Wire"

        /** Unguessable per process, so that a client cannot ask for an answer by sending the header itself. */
        val SECRET: String = HexFormat.of().formatHex(ByteArray(16).also { SecureRandom().nextBytes(it) })
    }
}

/** The answer the scanner's mark asks for, if [value] (the `X-Cityref-Wire` header) is one. */
fun wireRefusal(value: String?): AppError? =
    when (value) {
        null -> null
        "${Wire.SECRET} ${WireScanner.TARGET_TOO_LONG}" -> AppError.UriTooLong
        "${Wire.SECRET} ${WireScanner.MALFORMED}" -> AppError.Malformed
        "${Wire.SECRET} ${WireScanner.HEAD_TOO_LARGE}" -> AppError.HeaderFieldsTooLarge
        else -> null
    }

/** Follows HTTP/1.1 request framing byte by byte (RFC 9112 as the contract narrows it). */
class WireScanner(
    private val secret: String,
) {
    private enum class State {
        LINE_START,
        LEADING_CR,
        METHOD,
        TARGET,
        VERSION,
        VERSION_LF,
        FIELD_START,
        FIELD_NAME,
        FIELD_VALUE,
        FIELD_LF,
        END_LF,
        BODY,
        CHUNK_SIZE,
        CHUNK_EXT,
        CHUNK_SIZE_LF,
        CHUNK_DATA,
        CHUNK_DATA_CR,
        CHUNK_DATA_LF,
        TRAILER,
        TRAILER_LF,
        CLOSED,
    }

    /** A refusal: the request is replaced by a stand-in marked [mark]. */
    private class Refused(
        val mark: String,
    ) : Exception(null, null, false, false)

    private var state = State.LINE_START
    private var head = ByteArray(512) // the request head being read, held back until it is complete
    private var len = 0
    private var methodEnd = 0
    private var targetStart = 0
    private var targetLen = 0 // target bytes as sent (head keeps the first MAX_REQUEST_TARGET)
    private var versionAt = 0
    private var fieldsStart = 0 // where the header section starts in head
    private var lineStart = 0
    private var valueStart = 0
    private var http10 = false
    private var hosts = 0
    private var length = -1L // Content-Length, -1 if none
    private var chunked = false
    private var remaining = 0L // body or chunk bytes left
    private var chunkDigits = false
    private var emptyLine = false

    /** Scans [input]; returns what Netty's decoder may read. */
    fun feed(input: ByteArray): ByteArray {
        val out = java.io.ByteArrayOutputStream(0)
        var i = 0
        while (i < input.size) {
            when (state) {
                State.CLOSED -> {
                    return out.toByteArray()
                }

                State.BODY, State.CHUNK_DATA -> {
                    val n = minOf(remaining, (input.size - i).toLong()).toInt()
                    i += n
                    remaining -= n
                    if (remaining == 0L) state = if (state == State.BODY) State.LINE_START else State.CHUNK_DATA_CR
                }

                else -> {
                    try {
                        byte(input[i].toInt() and 0xff, out)
                    } catch (refused: Refused) {
                        refuse(refused.mark, out)
                    }
                    i++
                }
            }
        }
        return out.toByteArray()
    }

    /**
     * Replaces the request by a stand-in the application answers with [mark]. A 431 is an
     * ordinary answer (a HEAD gets its headers only); a malformed request is not trusted to be a HEAD.
     */
    private fun refuse(
        mark: String,
        out: java.io.ByteArrayOutputStream,
    ) {
        val isHead = methodEnd == 4 && String(head, 0, 4, Charsets.ISO_8859_1) == "HEAD"
        val method = if (mark == HEAD_TOO_LARGE && isHead) "HEAD" else "GET"
        out.writeBytes("$method / HTTP/1.1\r\nHost: cityref\r\nConnection: close\r\n${Wire.HEADER}: $secret $mark\r\n\r\n".toByteArray())
        head = ByteArray(0)
        state = State.CLOSED
    }

    private fun push(b: Int) {
        if (len == head.size) head = head.copyOf(head.size * 2)
        head[len++] = b.toByte()
    }

    private fun push(s: String) = s.forEach { push(it.code) }

    private fun malformed(): Nothing = throw Refused(MALFORMED)

    private fun checkSectionSize() {
        if (len - fieldsStart > MAX_HEADER_SECTION) throw Refused(HEAD_TOO_LARGE)
    }

    private fun byte(
        b: Int,
        out: java.io.ByteArrayOutputStream,
    ) {
        when (state) {
            State.LINE_START -> {
                when {
                    b == CR -> {
                        state = State.LEADING_CR
                    }

                    isTchar(b) -> {
                        len = 0
                        methodEnd = 0
                        push(b)
                        state = State.METHOD
                    }

                    else -> {
                        malformed()
                    }
                }
            }

            State.LEADING_CR -> {
                if (b == LF) state = State.LINE_START else malformed()
            }

            State.METHOD -> {
                when {
                    b == SP -> {
                        methodEnd = len
                        push(b)
                        targetStart = len
                        targetLen = 0
                        state = State.TARGET
                    }

                    isTchar(b) -> {
                        push(b)
                    }

                    else -> {
                        malformed()
                    }
                }
            }

            State.TARGET -> {
                when {
                    b == SP && targetLen > 0 -> {
                        push(b)
                        versionAt = len
                        state = State.VERSION
                    }

                    b <= SP || b == 0x7f -> {
                        malformed()
                    }

                    else -> {
                        targetLen++
                        if (targetLen <= MAX_REQUEST_TARGET) push(b) // past it: answered 414 on its start
                    }
                }
            }

            State.VERSION -> {
                when {
                    b == CR -> {
                        http10 =
                            when (String(head, versionAt, len - versionAt, Charsets.ISO_8859_1)) {
                                "HTTP/1.1" -> false
                                "HTTP/1.0" -> true
                                else -> malformed()
                            }
                        push(b)
                        state = State.VERSION_LF
                    }

                    len - versionAt < 8 -> {
                        push(b)
                    }

                    else -> {
                        malformed()
                    }
                }
            }

            State.VERSION_LF -> {
                if (b != LF) malformed()
                push(b)
                if (targetLen > MAX_REQUEST_TARGET) push("${Wire.HEADER}: $secret $TARGET_TOO_LONG\r\n")
                fieldsStart = len
                hosts = 0
                length = -1
                chunked = false
                state = State.FIELD_START
            }

            State.FIELD_START -> {
                lineStart = len
                push(b)
                state =
                    when {
                        b == CR -> State.END_LF
                        isTchar(b) -> State.FIELD_NAME
                        else -> malformed() // obs-fold, bare LF, whitespace or junk
                    }
            }

            State.FIELD_NAME -> {
                push(b)
                when {
                    b == ':'.code -> {
                        valueStart = len
                        state = State.FIELD_VALUE
                    }

                    isTchar(b) -> {
                        checkSectionSize()
                    }

                    else -> {
                        malformed()
                    } // no colon, whitespace before it
                }
            }

            State.FIELD_VALUE -> {
                push(b)
                when {
                    b == CR -> {
                        state = State.FIELD_LF
                    }

                    b == TAB -> {}

                    b < SP || b == 0x7f -> {
                        malformed()
                    }

                    else -> {
                        checkSectionSize()
                    }
                }
            }

            State.FIELD_LF -> {
                if (b != LF) malformed()
                push(b)
                fieldLine()
                state = State.FIELD_START
            }

            State.END_LF -> {
                if (b != LF) malformed()
                push(b)
                endOfHead(out)
            }

            State.CHUNK_SIZE -> {
                when {
                    b == CR && chunkDigits -> {
                        state = State.CHUNK_SIZE_LF
                    }

                    (b == ';'.code || b == SP || b == TAB) && chunkDigits -> {
                        state = State.CHUNK_EXT
                    }

                    Character.digit(b, 16) >= 0 && remaining < (1L shl 55) -> {
                        remaining = remaining * 16 + Character.digit(b, 16)
                        chunkDigits = true
                    }

                    else -> {
                        malformed()
                    }
                }
            }

            State.CHUNK_EXT -> {
                when (b) {
                    CR -> state = State.CHUNK_SIZE_LF
                    LF -> malformed()
                }
            }

            State.CHUNK_SIZE_LF -> {
                when {
                    b != LF -> {
                        malformed()
                    }

                    remaining == 0L -> {
                        state = State.TRAILER
                        emptyLine = true
                    }

                    else -> {
                        state = State.CHUNK_DATA
                    }
                }
            }

            State.CHUNK_DATA_CR -> {
                if (b == CR) state = State.CHUNK_DATA_LF else malformed()
            }

            State.CHUNK_DATA_LF -> {
                if (b == LF) startChunk() else malformed()
            }

            State.TRAILER -> {
                when (b) {
                    CR -> state = State.TRAILER_LF
                    LF -> malformed()
                    else -> emptyLine = false
                }
            }

            State.TRAILER_LF -> {
                when {
                    b != LF -> {
                        malformed()
                    }

                    emptyLine -> {
                        state = State.LINE_START
                    }

                    else -> {
                        state = State.TRAILER
                        emptyLine = true
                    }
                }
            }

            State.BODY, State.CHUNK_DATA, State.CLOSED -> {
                error("handled in feed")
            }
        }
    }

    private fun nameIs(name: String): Boolean =
        valueStart - 1 - lineStart == name.length &&
            String(head, lineStart, name.length, Charsets.ISO_8859_1).equals(name, ignoreCase = true)

    private fun value(): String = String(head, valueStart, len - 2 - valueStart, Charsets.ISO_8859_1).trim(' ', '\t')

    /** A complete field line (CRLF included) is at the end of head; the framing headers are dropped. */
    private fun fieldLine() {
        when {
            nameIs("Host") -> {
                hosts++
                return
            }

            nameIs("Content-Length") -> {
                val value = value()
                if (length >= 0 || value.isEmpty() || value.length > 18 || !value.all { it in '0'..'9' }) {
                    malformed() // not one decimal number, or repeated
                }
                length = value.toLong()
            }

            nameIs("Transfer-Encoding") -> {
                if (chunked || !value().equals("chunked", ignoreCase = true)) malformed()
                chunked = true
            }

            else -> {
                return
            }
        }
        len = lineStart
    }

    /** The empty line ending the head is at the end of head: check it, hand it on, follow its body. */
    private fun endOfHead(out: java.io.ByteArrayOutputStream) {
        if ((length >= 0 && chunked) || hosts > 1 || (!http10 && hosts == 0)) malformed()
        when {
            chunked -> {
                startChunk()
            }

            length > 0 -> {
                state = State.BODY
                remaining = length
            }

            else -> {
                state = State.LINE_START
            }
        }
        out.write(head, 0, len)
        len = 0
        if (head.size > 4096) head = ByteArray(512) // do not keep a large head's array alive
    }

    private fun startChunk() {
        remaining = 0
        chunkDigits = false
        state = State.CHUNK_SIZE
    }

    companion object {
        const val TARGET_TOO_LONG = "414"
        const val MALFORMED = "400"
        const val HEAD_TOO_LARGE = "431"

        /** A header section (the field lines) longer than this is answered 431. */
        const val MAX_HEADER_SECTION = 65536

        private const val CR = '\r'.code
        private const val LF = '\n'.code
        private const val SP = ' '.code
        private const val TAB = '\t'.code

        private fun isTchar(b: Int): Boolean =
            b in 'a'.code..'z'.code || b in 'A'.code..'Z'.code || b in '0'.code..'9'.code || "!#$%&'*+-.^_`|~".indexOf(b.toChar()) >= 0
    }
}
