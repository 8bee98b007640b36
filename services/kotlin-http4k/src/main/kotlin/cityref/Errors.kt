// The file is named after its role in the service shape (services/README.md), not after its one class.
@file:Suppress("ktlint:standard:filename")

package cityref

import org.http4k.core.Status

/**
 * Every non-2xx answer of the service: its status and its fixed message (the spec's table).
 * Thrown anywhere below the transport's [CatchAppErrors] filter and rendered there (Transport.kt).
 */
sealed class AppError(
    val status: Status,
    override val message: String,
) : Exception(message, null, false, false) {
    class BadRequest(
        problems: List<String>,
    ) : AppError(Status.BAD_REQUEST, "Bad Request: ${problems.joinToString("; ")}")

    class CityNotFound(
        id: Long,
    ) : AppError(Status.NOT_FOUND, "Not Found: City#$id not found.")

    data object NoSuchResource : AppError(Status.NOT_FOUND, "Not Found: no such resource.")

    data object MethodNotAllowed : AppError(Status.METHOD_NOT_ALLOWED, "Method Not Allowed: use GET.")

    data object UriTooLong : AppError(Status(414, "URI Too Long"), "URI Too Long: request target exceeds 8192 bytes.")

    data object Malformed : AppError(Status.BAD_REQUEST, "Bad Request: malformed request.")

    data object HeaderFieldsTooLarge :
        AppError(Status(431, "Request Header Fields Too Large"), "Request Header Fields Too Large: header section exceeds 65536 bytes.")

    class CityMalformed(
        id: Long,
    ) : AppError(Status.INTERNAL_SERVER_ERROR, "Internal Server Error: City#$id is malformed.")

    class CityNameMissing(
        id: Long,
        language: String,
    ) : AppError(Status.INTERNAL_SERVER_ERROR, "Internal Server Error: City#$id has no name in '$language'.")

    class RegionNotFound(
        regionId: Long,
        cityId: Long,
    ) : AppError(Status.INTERNAL_SERVER_ERROR, "Internal Server Error: Region#$regionId of City#$cityId not found.")

    class RegionNameMissing(
        regionId: Long,
        language: String,
    ) : AppError(Status.INTERNAL_SERVER_ERROR, "Internal Server Error: Region#$regionId has no name in '$language'.")

    data object Unavailable : AppError(Status.SERVICE_UNAVAILABLE, "Service Unavailable: search backend unavailable.")

    data object Timeout : AppError(Status.GATEWAY_TIMEOUT, "Gateway Timeout: search backend timed out.")

    /** Not in the contract's table: a bug of this service. */
    data object Internal : AppError(Status.INTERNAL_SERVER_ERROR, "Internal Server Error: unexpected error.")
}
