package cityref

/**
 * What the service needs from the backend (the [CityRepository], or a fake in tests): blocking,
 * as each request runs on its own virtual thread.
 */
interface CityLookup {
    /** The city's document with its name in [language]; null for a plain not-found. */
    fun findCity(
        id: Long,
        language: String,
    ): Source?

    /** The region's document with all its names; null for a plain not-found. */
    fun findRegion(id: Long): Source?
}
