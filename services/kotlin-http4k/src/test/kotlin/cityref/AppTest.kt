package cityref

import com.fasterxml.jackson.databind.ObjectMapper
import org.http4k.core.Method
import org.http4k.core.Method.GET
import org.http4k.core.Method.HEAD
import org.http4k.core.Method.POST
import org.http4k.core.Request
import org.http4k.core.Response
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/** The whole app as a function: no server, a fake backend. */
class AppTest {
    private val mapper = ObjectMapper()

    private fun source(json: String) = mapper.readTree(json) as Source

    private val backend =
        object : CityLookup {
            var regionLookups = 0

            override fun findCity(
                id: Long,
                language: String,
            ): Source? =
                when (id) {
                    1L -> source("""{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":10,"name.$language":"Plzeň"}""")
                    2L -> source("""{"id":2,"countryIso":"CZ","isFeatured":"yes","regionId":10}""")
                    3L -> throw AppError.Timeout
                    4L -> source("""{"id":4,"countryIso":"CZ","isFeatured":false,"regionId":10}""")
                    else -> null
                }

            override fun findRegion(id: Long): Source? {
                regionLookups++
                return if (id == 10L) source("""{"name.en":"Region Pilsen","name.cs":"Plzeňský kraj"}""") else null
            }
        }
    private val telemetry = Telemetry()
    private val app = cityrefApp(CityService(backend), telemetry)

    private fun call(
        method: Method,
        target: String,
    ): Response = app(Request(method, target))

    private fun assertJson(
        response: Response,
        status: Int,
        body: String,
    ) {
        assertEquals(status, response.status.code)
        assertEquals("application/json", response.header("Content-Type"))
        assertEquals(body, response.bodyString())
        assertEquals(body.toByteArray().size.toString(), response.header("Content-Length"))
    }

    @Test
    fun city() {
        assertJson(
            call(GET, "/city/v1/get?id=1&language=cs"),
            200,
            """{"countryIso":"CZ","id":1,"isFeatured":true,"name":"Plzeň","regionName":"Plzeňský kraj"}""",
        )
        assertJson(
            call(GET, "/city/v1/get?id=1&language=sk"),
            500,
            """{"message":"Internal Server Error: Region#10 has no name in 'sk'."}""",
        )
        assertJson(call(GET, "/city/v1/get?id=2&language=en"), 500, """{"message":"Internal Server Error: City#2 is malformed."}""")
        assertJson(call(GET, "/city/v1/get?id=0099&language=en"), 404, """{"message":"Not Found: City#99 not found."}""")
        assertJson(call(GET, "/city/v1/get?id=3&language=en"), 504, """{"message":"Gateway Timeout: search backend timed out."}""")
        assertJson(
            call(GET, "/city/v1/get?id=x"),
            400,
            """{"message":"Bad Request: parameter 'id' must be an integer from 1 to 9223372036854775807; parameter 'language' is missing"}""",
        )
    }

    @Test
    fun `no region lookup before the city passed its checks`() {
        assertJson(call(GET, "/city/v1/get?id=4&language=en"), 500, """{"message":"Internal Server Error: City#4 has no name in 'en'."}""")
        assertEquals(500, call(GET, "/city/v1/get?id=2&language=en").status.code)
        assertEquals(404, call(GET, "/city/v1/get?id=99&language=en").status.code)
        assertEquals(0, backend.regionLookups)
        assertEquals(200, call(GET, "/city/v1/get?id=1&language=en").status.code)
        assertEquals(1, backend.regionLookups)
    }

    @Test
    fun `paths match exactly, methods are checked first`() {
        listOf("/", "/city/v1/get/", "//city/v1/get", "/City/v1/get", "/city/v1/./get", "/health/").forEach {
            assertJson(call(GET, it), 404, """{"message":"Not Found: no such resource."}""")
        }
        val post = call(POST, "/city/v1/get?id=0")
        assertJson(post, 405, """{"message":"Method Not Allowed: use GET."}""")
        assertEquals("GET, HEAD", post.header("Allow"))
        assertJson(call(HEAD, "/health"), 200, """{"status":"UP"}""")
    }

    @Test
    fun `long targets are 414 before anything else`() {
        val pad = "a".repeat(8192)
        assertJson(call(POST, "/nope?$pad"), 414, """{"message":"URI Too Long: request target exceeds 8192 bytes."}""")
        val exact = "/city/v1/get?id=1&language=en&pad="
        assertEquals(200, call(GET, exact + "a".repeat(8192 - exact.length)).status.code)
    }

    @Test
    fun `metrics are http4k's timer, labelled with the route`() {
        call(GET, "/city/v1/get?id=1&language=en")
        call(Method.PUT, "/health")
        call(GET, "/nope")
        val text = call(GET, "/metrics").bodyString()
        assertTrue("# TYPE http_server_request_latency_seconds histogram" in text, text)

        fun counted(
            method: String,
            status: Int,
            route: String,
        ) = "http_server_request_latency_seconds_count{method=\"$method\",path=\"$route\",status=\"$status\"} 1"
        assertTrue(counted("GET", 200, "/city/v1/get") in text, text)
        assertTrue(counted("PUT", 405, "/health") in text, text)
        assertTrue(counted("GET", 404, "") in text, text)
    }

    @Test
    fun `api-docs is the spec verbatim`() {
        val expected = java.io.File("generated/openapi.json").readBytes()
        val response = call(GET, "/api-docs")
        assertEquals("application/json", response.header("Content-Type"))
        assertTrue(expected.contentEquals(response.body.payload.let { b -> ByteArray(b.remaining()).also { b.duplicate().get(it) } }))
    }
}
