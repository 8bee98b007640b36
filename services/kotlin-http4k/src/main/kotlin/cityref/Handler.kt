package cityref

import cityref.generated.models.Health
import org.http4k.core.Filter
import org.http4k.core.HttpHandler
import org.http4k.core.Method.GET
import org.http4k.core.Method.HEAD
import org.http4k.core.Response
import org.http4k.core.Status
import org.http4k.core.Status.Companion.OK
import org.http4k.core.then
import org.http4k.format.Jackson
import org.http4k.routing.Router
import org.http4k.routing.RoutingHttpHandler
import org.http4k.routing.bind
import org.http4k.routing.orElse
import org.http4k.routing.routes

/** Longest request target (path and query as sent) answered normally. */
const val MAX_REQUEST_TARGET = 8192

/** The listed paths; anything else is 404, whatever the method. */
val LISTED_PATHS = setOf("/city/v1/get", "/health", "/api-docs", "/metrics")

/** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
private val OPENAPI_JSON: ByteArray = Telemetry::class.java.getResourceAsStream("/openapi.json")!!.readBytes()

/**
 * The whole service as one [HttpHandler]: request log → duration histogram → error rendering →
 * request-target limit → the four listed paths.
 */
fun cityrefApp(
    repository: CityLookup,
    telemetry: Telemetry,
): HttpHandler =
    telemetry.logRequests
        .then(telemetry.recordDuration)
        .then(CatchAppErrors)
        .then(RejectLongTargets)
        .then(routes(telemetry::scrape, repository))

/** 414 before anything else (the target as sent, path and query). */
val RejectLongTargets =
    Filter { next ->
        { request -> if (request.target.length > MAX_REQUEST_TARGET) throw AppError.UriTooLong else next(request) }
    }

/**
 * Exact paths (http4k's `"/path" bind …` templates ignore leading and trailing slashes, which the
 * contract wants unknown), GET and HEAD on each, 405 for other methods on a listed path, 404 for
 * everything else. HEAD gets the GET response; the server drops the body and keeps Content-Length.
 */
fun routes(
    scrape: () -> String,
    repository: CityLookup,
): RoutingHttpHandler =
    routes(
        listedPath("/city/v1/get") { request -> jsonResponse(OK, getCity(repository, cityQuery(request))) },
        listedPath("/health") { jsonResponse(OK, Health(Health.Status.UP)) },
        listedPath("/api-docs") { bytesResponse(OK, JSON_CONTENT_TYPE, OPENAPI_JSON) },
        listedPath("/metrics") { bytesResponse(OK, METRICS_CONTENT_TYPE, scrape().toByteArray()) },
        orElse bind { throw AppError.NoSuchResource },
    )

private fun listedPath(
    path: String,
    handler: HttpHandler,
): RoutingHttpHandler =
    Router("path == $path") { it.uri.path == path } bind
        routes(
            GET bind handler,
            HEAD bind handler,
            orElse bind { throw AppError.MethodNotAllowed },
        )

/** Exactly `application/json`: http4k's JSON body lenses would add `; charset=utf-8`. */
const val JSON_CONTENT_TYPE = "application/json"

/** [body] as compact JSON (http4k's Jackson: schema order, non-ASCII written literally). */
fun jsonResponse(
    status: Status,
    body: Any,
): Response = bytesResponse(status, JSON_CONTENT_TYPE, Jackson.asFormatString(body).toByteArray())

/** The bytes with an explicit Content-Length (so HEAD answers carry it, and nothing is chunked). */
fun bytesResponse(
    status: Status,
    contentType: String,
    bytes: ByteArray,
): Response =
    Response(status)
        .header("Content-Type", contentType)
        .header("Content-Length", bytes.size.toString())
        .body(org.http4k.core.MemoryBody(bytes))

/** What a request that http4k cannot represent gets (see [OtherMethods]): 414, 404 or 405. */
fun answerOtherMethod(
    path: String,
    target: String,
): AppError =
    when {
        target.length > MAX_REQUEST_TARGET -> AppError.UriTooLong
        path !in LISTED_PATHS -> AppError.NoSuchResource
        else -> AppError.MethodNotAllowed
    }
