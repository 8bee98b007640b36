// The file is named after its role in the service shape (services/README.md), not after its one class.
@file:Suppress("ktlint:standard:filename")

package cityref

import io.ktor.http.HttpStatusCode

/**
 * Every non-2xx answer of the service: its status and its fixed message (the spec's table).
 * Thrown anywhere in a call and rendered by the StatusPages plugin (installed in [cityref], Transport.kt).
 */
sealed class AppError(
    val status: HttpStatusCode,
    override val message: String,
) : Exception(message, null, false, false) {
    class BadRequest(
        problems: String,
    ) : AppError(HttpStatusCode.BadRequest, "Bad Request: $problems")

    class CityNotFound(
        id: Long,
    ) : AppError(HttpStatusCode.NotFound, "Not Found: City#$id not found.")

    object NoSuchResource : AppError(HttpStatusCode.NotFound, "Not Found: no such resource.") {
        private fun readResolve(): Any = NoSuchResource
    }

    object MethodNotAllowed : AppError(HttpStatusCode.MethodNotAllowed, "Method Not Allowed: use GET.") {
        private fun readResolve(): Any = MethodNotAllowed
    }

    object UriTooLong : AppError(HttpStatusCode(414, "URI Too Long"), "URI Too Long: request target exceeds 8192 bytes.") {
        private fun readResolve(): Any = UriTooLong
    }

    /** A request Ktor itself refuses (a second Host field, a query it cannot decode): the spec's *framework* row. */
    object Malformed : AppError(HttpStatusCode.BadRequest, "Bad Request: malformed request.") {
        private fun readResolve(): Any = Malformed
    }

    class CityMalformed(
        id: Long,
    ) : AppError(HttpStatusCode.InternalServerError, "Internal Server Error: City#$id is malformed.")

    class CityNameMissing(
        id: Long,
        language: String,
    ) : AppError(HttpStatusCode.InternalServerError, "Internal Server Error: City#$id has no name in '$language'.")

    class RegionNotFound(
        regionId: Long,
        cityId: Long,
    ) : AppError(HttpStatusCode.InternalServerError, "Internal Server Error: Region#$regionId of City#$cityId not found.")

    class RegionNameMissing(
        regionId: Long,
        language: String,
    ) : AppError(HttpStatusCode.InternalServerError, "Internal Server Error: Region#$regionId has no name in '$language'.")

    object Unavailable : AppError(HttpStatusCode.ServiceUnavailable, "Service Unavailable: search backend unavailable.") {
        private fun readResolve(): Any = Unavailable
    }

    object Timeout : AppError(HttpStatusCode.GatewayTimeout, "Gateway Timeout: search backend timed out.") {
        private fun readResolve(): Any = Timeout
    }

    /** Not in the contract's table: a bug of this service, never expected. */
    object Internal : AppError(HttpStatusCode.InternalServerError, "Internal Server Error: unexpected error.") {
        private fun readResolve(): Any = Internal
    }
}
