package cityref

import com.fasterxml.jackson.databind.ObjectMapper
import io.ktor.client.request.head
import io.ktor.client.request.request
import io.ktor.client.statement.bodyAsText
import io.ktor.http.HttpMethod
import io.ktor.http.HttpStatusCode
import io.ktor.server.testing.ApplicationTestBuilder
import io.ktor.server.testing.testApplication
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/** In-memory backend: city 1 (region 1), city 2 without a Polish name, city 3 in a missing region. */
private class FakeLookup : CityLookup {
    private val mapper = ObjectMapper()

    private fun doc(json: String) = mapper.readTree(json) as Source

    val cities =
        mapOf(
            1L to doc("""{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":1,"name.en":"Prague","name.pl":"Praga"}"""),
            2L to doc("""{"id":2,"countryIso":"CZ","isFeatured":false,"regionId":1,"name.en":"Brno","name.pl":""}"""),
            3L to doc("""{"id":3,"countryIso":"CZ","isFeatured":false,"regionId":99,"name.en":"Nowhere"}"""),
            4L to doc("""{"id":"4","countryIso":"CZ","isFeatured":false,"regionId":1,"name.en":"Broken"}"""),
        )
    var regionLookups = 0

    override suspend fun findCity(
        id: Long,
        language: String,
    ) = cities[id]

    override suspend fun findRegion(id: Long): Source? {
        regionLookups++
        return if (id == 1L) doc("""{"name.en":"Prague","name.pl":"Praga"}""") else null
    }
}

class AppTest {
    private val lookup = FakeLookup()

    private fun app(block: suspend ApplicationTestBuilder.() -> Unit) =
        testApplication {
            application { cityref(CityService(lookup), PrometheusMeterRegistry(PrometheusConfig.DEFAULT)) }
            block()
        }

    private suspend fun ApplicationTestBuilder.get(
        path: String,
        method: HttpMethod = HttpMethod.Get,
    ) = client.request(path) { this.method = method }

    @Test
    fun city() =
        app {
            val r = get("/city/v1/get?id=0001&language=en")
            assertEquals(HttpStatusCode.OK, r.status)
            assertEquals("application/json", r.headers["Content-Type"])
            assertEquals("""{"countryIso":"CZ","id":1,"isFeatured":true,"name":"Prague","regionName":"Prague"}""", r.bodyAsText())
        }

    @Test
    fun errorTable() =
        app {
            val cases =
                listOf(
                    "/city/v1/get?id=7&language=en" to (404 to "Not Found: City#7 not found."),
                    "/city/v1/get?id=2&language=pl" to (500 to "Internal Server Error: City#2 has no name in 'pl'."),
                    "/city/v1/get?id=3&language=en" to (500 to "Internal Server Error: Region#99 of City#3 not found."),
                    "/city/v1/get?id=4&language=en" to (500 to "Internal Server Error: City#4 is malformed."),
                    "/city/v1/get" to (400 to "Bad Request: parameter 'id' is missing; parameter 'language' is missing"),
                    "/nope" to (404 to "Not Found: no such resource."),
                    "/city/v1/get/" to (404 to "Not Found: no such resource."),
                    "/City/v1/get" to (404 to "Not Found: no such resource."),
                    "/health/" to (404 to "Not Found: no such resource."),
                    "/" to (404 to "Not Found: no such resource."),
                    // Exact paths: Ktor's router would decode `%67`. (`//x`, `/%zz` and `?id=%zz` cannot be
                    // sent with Ktor's client, which parses the URL; the conformance suite sends them.)
                    "/city/v1/%67et?id=1&language=en" to (404 to "Not Found: no such resource."),
                )
            for ((path, expected) in cases) {
                val r = get(path)
                assertEquals(expected.first, r.status.value, path)
                assertEquals("application/json", r.headers["Content-Type"], path)
                assertEquals("""{"message":"${expected.second}"}""", r.bodyAsText(), path)
            }
        }

    @Test
    fun noRegionLookupBeforeTheCityPassedItsChecks() =
        app {
            for (query in listOf("id=7&language=en", "id=4&language=en", "id=2&language=pl")) {
                assertEquals(HttpStatusCode.fromValue(if (query.startsWith("id=7")) 404 else 500), get("/city/v1/get?$query").status, query)
            }
            assertEquals(0, lookup.regionLookups)
            assertEquals(HttpStatusCode.OK, get("/city/v1/get?id=1&language=pl").status)
            assertEquals(1, lookup.regionLookups)
        }

    @Test
    fun methods() =
        app {
            for (method in listOf(HttpMethod.Post, HttpMethod.Put, HttpMethod.Delete, HttpMethod.Patch, HttpMethod("FOO"))) {
                for (path in LISTED_PATHS) {
                    val r = get(path, method)
                    assertEquals(405, r.status.value, "$method $path")
                    assertEquals("GET, HEAD", r.headers["Allow"])
                    assertEquals("""{"message":"Method Not Allowed: use GET."}""", r.bodyAsText())
                }
                assertEquals(404, get("/nope", method).status.value)
            }
            // The method is checked before the parameters.
            assertEquals(405, get("/city/v1/get?id=x", HttpMethod.Post).status.value)
        }

    @Test
    fun headIsGetWithoutBody() =
        app {
            for (path in listOf("/health", "/city/v1/get?id=1&language=en", "/city/v1/get?id=x", "/api-docs")) {
                val g = get(path)
                val h = client.head(path)
                assertEquals(g.status, h.status, path)
                assertEquals(g.headers["Content-Type"], h.headers["Content-Type"], path)
                assertEquals(
                    g
                        .bodyAsText()
                        .toByteArray()
                        .size
                        .toString(),
                    h.headers["Content-Length"],
                    path,
                )
                assertEquals("", h.bodyAsText(), path)
            }
        }

    @Test
    fun uriTooLong() =
        app {
            val base = "/city/v1/get?id=1&language=en&pad="
            assertEquals(200, get(base + "a".repeat(MAX_REQUEST_TARGET - base.length)).status.value)
            for (path in listOf(base + "a".repeat(MAX_REQUEST_TARGET - base.length + 1), "/nope?" + "a".repeat(65536))) {
                val r = get(path)
                assertEquals(414, r.status.value)
                assertEquals("""{"message":"URI Too Long: request target exceeds 8192 bytes."}""", r.bodyAsText())
            }
        }

    @Test
    fun apiDocsAndMetrics() =
        app {
            val docs = get("/api-docs")
            assertEquals("application/json", docs.headers["Content-Type"])
            assertTrue(docs.bodyAsText().startsWith("{"))
            get("/nope", HttpMethod("FOO"))
            get("/city/v1/get?id=1&language=en")
            get("/city/v1/get?id=1&language=en", HttpMethod.Head)
            get("/city/v1/get?id=1&language=en", HttpMethod.Post)
            val metrics = get("/metrics").bodyAsText()
            assertTrue("# TYPE http_server_request_duration_seconds histogram" in metrics, metrics)
            for ((method, status, route) in listOf(
                Triple("GET", 200, "/city/v1/get"),
                Triple("HEAD", 200, "/city/v1/get"),
                Triple("POST", 405, "/city/v1/get"),
                Triple("_OTHER", 404, ""),
            )) {
                val series =
                    "http_server_request_duration_seconds_count{http_request_method=\"$method\"," +
                        "http_response_status_code=\"$status\",http_route=\"$route\"} 1"
                assertTrue(series in metrics, "$method $status $route:\n$metrics")
            }
        }

    @Test
    fun eachCallCountedOnce() {
        // Ktor's own 404 and 405 are answered twice over (StatusPages replaces the first answer).
        val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
        testApplication {
            application { cityref(CityService(FakeLookup()), registry) }
            assertEquals(404, get("/nope", HttpMethod.Post).status.value)
            assertEquals(405, get("/health", HttpMethod.Post).status.value)
            assertEquals(200, get("/health").status.value)
            val counts = Regex("""http_server_request_duration_seconds_count\{[^}]*} (\S+)""").findAll(registry.scrape())
            assertEquals(listOf(1.0, 1.0, 1.0), counts.map { it.groupValues[1].toDouble() }.toList().sorted())
        }
        assertEquals(0, registry.inFlight())
    }
}
