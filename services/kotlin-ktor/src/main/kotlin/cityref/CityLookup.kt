package cityref

/**
 * What the service needs from the backend (the [CityRepository], or a fake in tests): `suspend`,
 * as the service runs in Ktor's coroutines.
 */
interface CityLookup {
    /** The city's document with its name in [language]; null for a plain not-found. */
    suspend fun findCity(
        id: Long,
        language: String,
    ): Source?

    /** The region's document with all its names; null for a plain not-found. */
    suspend fun findRegion(id: Long): Source?
}
