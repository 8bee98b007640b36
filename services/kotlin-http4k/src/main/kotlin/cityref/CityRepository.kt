package cityref

import java.util.concurrent.ExecutionException
import java.util.concurrent.Semaphore
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * The lookups on kotlin-shared's [Elasticsearch] (the client, the request, the failure mapping, the
 * region cache), waited for on the request's own (virtual) thread, thread-per-request like http4k
 * itself, so that plain sequential code keeps one deadline over the whole request:
 * ELASTICSEARCH_TIMEOUT_MS, the wait for a permit included (the spec).
 */
class CityRepository(
    private val elasticsearch: Elasticsearch,
) : CityLookup {
    /**
     * A request waits here (its virtual thread parked), inside its deadline, rather than in the
     * client's connection pool: a lease request the pool holds survives the cancel at the deadline and
     * is later sent on a new connection, so a burst beyond the bound would open a connection for every
     * abandoned request.
     */
    private val permits = Semaphore(MAX_CONNECTIONS)

    override fun findCity(
        id: Long,
        language: String,
    ): Source? = getSource(CITY_ALIAS, id, cityFields(language))

    override fun findRegion(id: Long): Source? = elasticsearch.region(id) { getSource(REGION_ALIAS, id, REGION_FIELDS) }

    /**
     * The document's `_source` or null, sent once a permit is free, within one deadline for both the
     * wait and the exchange (the spec): without an answer the request is cancelled (504). Any other
     * failure is mapped by [Elasticsearch.failed].
     */
    private fun getSource(
        alias: String,
        id: Long,
        fields: List<String>,
    ): Source? {
        val what = "GET /$alias/_doc/$id"
        val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(elasticsearch.timeoutMs)
        if (!permits.tryAcquire(elasticsearch.timeoutMs, TimeUnit.MILLISECONDS)) throw elasticsearch.timedOut(what)
        val response =
            try {
                val future = elasticsearch.get(alias, id, fields)
                try {
                    future.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)
                } finally {
                    future.cancel(true) // nothing once answered; else (no answer in time, interrupted) the exchange is aborted
                }
            } catch (e: TimeoutException) {
                throw elasticsearch.timedOut(what)
            } catch (e: ExecutionException) {
                throw elasticsearch.failed(what, e.cause ?: e)
            } catch (e: Exception) {
                throw elasticsearch.failed(what, e)
            } finally {
                permits.release()
            }
        return elasticsearch.sourceOf(what, response)
    }
}
