package cityref

import co.elastic.clients.elasticsearch.core.GetResponse
import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.http.conn.ConnectTimeoutException
import java.io.IOException
import java.net.ConnectException
import java.net.SocketTimeoutException
import java.util.concurrent.ExecutionException
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull

class ElasticsearchTest {
    private fun withClient(block: (Elasticsearch) -> Unit) = Elasticsearch(loadConfig(mapOf("ELASTICSEARCH_URL" to "http://127.0.0.1:1"))).use(block)

    @Test
    fun theClientsOwnTimeoutsAre504AndEverythingElse503() =
        withClient { es ->
            assertEquals(AppError.Timeout, es.failed("GET /city/_doc/1", ExecutionException(SocketTimeoutException("Read timed out"))))
            assertEquals(AppError.Timeout, es.failed("GET /city/_doc/1", IOException("x", ConnectTimeoutException())))
            assertEquals(AppError.Unavailable, es.failed("GET /city/_doc/1", ConnectException("Connection refused")))
            assertEquals(AppError.Unavailable, es.failed("GET /city/_doc/1", IllegalStateException()))
            assertEquals(AppError.Timeout, es.timedOut("GET /city/_doc/1"))
        }

    @Test
    fun aGetResponseIsItsSourceOrNull() =
        withClient { es ->
            val source = ObjectMapper().readTree("""{"name.en":"Brno"}""") as Source

            fun response(
                found: Boolean,
                source: Source?,
            ): GetResponse<Source> = GetResponse.of { it.index("city").id("1").found(found).source(source) }
            assertNull(es.sourceOf("GET /city/_doc/1", response(false, null)))
            assertEquals(source, es.sourceOf("GET /city/_doc/1", response(true, source)))
            assertFailsWith<AppError.Unavailable> { es.sourceOf("GET /city/_doc/1", response(true, null)) }
        }

    @Test
    fun foundRegionsAreCachedMissingOnesAreNot() =
        withClient { es ->
            val region = ObjectMapper().readTree("""{"name.en":"South Moravia"}""") as Source
            var fetched = 0
            assertNull(es.region(1) { null.also { fetched++ } })
            assertEquals(region, es.region(1) { region.also { fetched++ } })
            assertEquals(region, es.region(1) { null.also { fetched++ } })
            assertEquals(2, fetched)
        }

    @Test
    fun cityFieldsNeverGeometryOrPopulation() {
        assertEquals(listOf("id", "countryIso", "isFeatured", "regionId", "name.pl"), cityFields("pl"))
        assertEquals(listOf("name.cs", "name.de", "name.en", "name.pl", "name.sk"), REGION_FIELDS)
    }
}
