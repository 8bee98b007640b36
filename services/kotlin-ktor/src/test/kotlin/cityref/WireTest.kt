package cityref

import kotlin.test.Test
import kotlin.test.assertEquals

class WireTest {
    /** Feeds [input] to a scanner in chunks of [size] bytes; what Netty's decoder would read. */
    private fun scan(
        input: String,
        size: Int,
    ): String {
        val scanner = WireScanner("s3cret")
        val bytes = input.toByteArray(Charsets.UTF_8)
        val out = StringBuilder()
        for (start in bytes.indices step size) {
            out.append(String(scanner.feed(bytes.copyOfRange(start, minOf(start + size, bytes.size))), Charsets.ISO_8859_1))
        }
        return out.toString()
    }

    /** [scan] at several chunk sizes, which must all agree. */
    private fun scanned(input: String): String {
        val whole = scan(input, maxOf(input.length, 1) * 4)
        for (size in listOf(1, 2, 7, 1000)) assertEquals(whole, scan(input, size), "chunk size $size")
        return whole
    }

    private fun standIn(
        method: String,
        mark: String,
    ) = "$method / HTTP/1.1\r\nHost: cityref\r\nConnection: close\r\nX-Cityref-Wire: s3cret $mark\r\n\r\n"

    private val next = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test
    fun wellFormedHeadsPassUnchanged() {
        val input =
            "GET /city/v1/get?id=1&language=\"en\" HTTP/1.1\r\nHost: x\r\nX-Tab: a\tb\r\n\r\n" +
                "FOO /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + next
        assertEquals(input, scanned(input))
        assertEquals(next, scanned("\r\n\r\n$next"))
    }

    @Test
    fun bodiesAreReadAndDiscarded() {
        for (body in listOf(
            "Content-Length: 27\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
            "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1b;ext=1\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n",
            "transfer-encoding: Chunked\r\n\r\n0\r\nTrailer: t\r\n\r\n",
            "Content-Length: 0\r\n\r\n",
        )) {
            assertEquals("GET /health HTTP/1.1\r\nHost: x\r\n\r\n$next", scanned("GET /health HTTP/1.1\r\nHost: x\r\n$body$next"), body)
        }
    }

    @Test
    fun longTargetsAreCutAndMarked() {
        val target = "/city/v1/get?id=1&pad=" + "p".repeat(65536)
        val cut = "GET ${target.take(8192)} HTTP/1.1\r\nX-Cityref-Wire: s3cret 414\r\nHost: x\r\n\r\n"
        val exact = "GET /${"e".repeat(8191)} HTTP/1.1\r\nHost: x\r\n\r\n"
        assertEquals(
            cut + exact + cut,
            scanned("GET $target HTTP/1.1\r\nHost: x\r\n\r\n$exact" + "GET $target HTTP/1.1\r\nHost: x\r\n\r\n"),
        )
    }

    @Test
    fun malformedRequestsAreReplacedAndEndTheConnection() {
        val malformed = standIn("GET", WireScanner.MALFORMED)
        for (request in listOf(
            "GET /health HTTP/1.1\nHost: x\n\n",
            "\n\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET  /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /health\tHTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /health\r\nHost: x\r\n\r\n",
            "GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /he\u0001alth HTTP/1.1\r\nHost: x\r\n\r\n",
            "G(T /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "HEAD /health HTTP/2.0\r\nHost: x\r\n\r\n",
            "GET /health HTTP/1.2\r\nHost: x\r\n\r\n",
            "GET /health http/1.1\r\nHost: x\r\n\r\n",
            "GET /health HTTP/1.1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Bad : 1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Bad\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Ctl: a\u0001b\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        )) {
            // the pipelined request after it is never read
            assertEquals(next + malformed, scanned(next + request + next), request)
        }
    }

    @Test
    fun headerSectionsOver64KiBAre431() {
        val pad = "p".repeat(WireScanner.MAX_HEADER_SECTION)
        for ((method, answer) in listOf("GET" to "GET", "HEAD" to "HEAD", "POST" to "GET")) {
            val input = "$method /health HTTP/1.1\r\nHost: x\r\nX-Pad: $pad\r\n\r\n$next"
            assertEquals(standIn(answer, WireScanner.HEAD_TOO_LARGE), scanned(input), method)
        }
        val fits = "GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ${"p".repeat(16384)}\r\n\r\n"
        assertEquals(fits, scanned(fits))
    }

    @Test
    fun onlyTheSecretMarksARequest() {
        assertEquals(null, wireRefusal("guess 400"))
        assertEquals(AppError.Malformed, wireRefusal("${Wire.SECRET} 400"))
        assertEquals(AppError.HeaderFieldsTooLarge, wireRefusal("${Wire.SECRET} 431"))
        assertEquals(AppError.UriTooLong, wireRefusal("${Wire.SECRET} 414"))
    }
}
