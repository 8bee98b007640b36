package cityref

/**
 * Every non-2xx answer of the service: its status code and its fixed message (the spec's table).
 * Thrown anywhere below the transport, which renders it with its framework's own status type.
 */
sealed class AppError(
    val status: Int,
    override val message: String,
) : Exception(message, null, false, false) {
    /** The parameter problems, `id` first then `language`. */
    class BadRequest(
        problems: List<String>,
    ) : AppError(400, "Bad Request: ${problems.joinToString("; ")}")

    class CityNotFound(
        id: Long,
    ) : AppError(404, "Not Found: City#$id not found.")

    data object NoSuchResource : AppError(404, "Not Found: no such resource.")

    data object MethodNotAllowed : AppError(405, "Method Not Allowed: use GET.")

    data object UriTooLong : AppError(414, "URI Too Long: request target exceeds 8192 bytes.")

    /** The spec's *framework* row: a request the framework itself refuses. */
    data object Malformed : AppError(400, "Bad Request: malformed request.")

    /** The spec's *framework* 431, where the framework reports a header section over its limit. */
    data object HeaderFieldsTooLarge :
        AppError(431, "Request Header Fields Too Large: header section exceeds 65536 bytes.")

    class CityMalformed(
        id: Long,
    ) : AppError(500, "Internal Server Error: City#$id is malformed.")

    class CityNameMissing(
        id: Long,
        language: String,
    ) : AppError(500, "Internal Server Error: City#$id has no name in '$language'.")

    class RegionNotFound(
        regionId: Long,
        cityId: Long,
    ) : AppError(500, "Internal Server Error: Region#$regionId of City#$cityId not found.")

    class RegionNameMissing(
        regionId: Long,
        language: String,
    ) : AppError(500, "Internal Server Error: Region#$regionId has no name in '$language'.")

    data object Unavailable : AppError(503, "Service Unavailable: search backend unavailable.")

    data object Timeout : AppError(504, "Gateway Timeout: search backend timed out.")

    /** Not in the contract's table: a bug of this service, never expected. */
    data object Internal : AppError(500, "Internal Server Error: unexpected error.")
}

/** The longest chain of causes [causes] follows (a chain may loop). */
private const val MAX_CHAIN = 10

/** [this] and its causes, at most [MAX_CHAIN] in all. */
fun Throwable.causes(): Sequence<Throwable> = generateSequence(this) { it.cause.takeIf { c -> c !== it } }.take(MAX_CHAIN)
