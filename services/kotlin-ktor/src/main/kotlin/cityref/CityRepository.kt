package cityref

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.future.await
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import kotlinx.coroutines.withTimeout

/**
 * The lookups on kotlin-shared's [Elasticsearch] (the client, the request, the failure mapping, the
 * region cache), awaited in coroutines: the client's I/O runs on its own reactor threads (Apache
 * HttpAsyncClient) and completes a future, which `await()` bridges, so nothing blocks Ktor's threads.
 */
class CityRepository(
    private val elasticsearch: Elasticsearch,
) : CityLookup {
    /**
     * A request waits here (suspended), inside its deadline, rather than in the client's connection
     * pool: a lease request the pool holds survives the cancel at the deadline and is later sent on a
     * new connection, so a burst beyond the bound would open a connection for every abandoned request.
     */
    private val permits = Semaphore(MAX_CONNECTIONS)

    override suspend fun findCity(
        id: Long,
        language: String,
    ): Source? = getSource(CITY_ALIAS, id, cityFields(language))

    override suspend fun findRegion(id: Long): Source? = elasticsearch.region(id) { getSource(REGION_ALIAS, id, REGION_FIELDS) }

    /**
     * The document's `_source` or null, within one deadline (`withTimeout`) for the wait for a permit
     * and the exchange: without an answer the coroutine is cancelled, and `await()` cancels the
     * request with it (504). Any other failure is mapped by [Elasticsearch.failed].
     */
    private suspend fun getSource(
        alias: String,
        id: Long,
        fields: List<String>,
    ): Source? {
        val what = "GET /$alias/_doc/$id"
        val response =
            try {
                withTimeout(elasticsearch.timeoutMs) { permits.withPermit { elasticsearch.get(alias, id, fields).await() } }
            } catch (e: TimeoutCancellationException) {
                throw elasticsearch.timedOut(what)
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                throw elasticsearch.failed(what, e)
            }
        return elasticsearch.sourceOf(what, response)
    }
}
