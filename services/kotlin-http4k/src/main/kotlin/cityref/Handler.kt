package cityref

import cityref.generated.models.Health
import org.http4k.core.Filter
import org.http4k.core.HttpHandler
import org.http4k.core.Method.GET
import org.http4k.core.Method.HEAD
import org.http4k.core.Request
import org.http4k.core.Response
import org.http4k.core.Status
import org.http4k.core.Status.Companion.OK
import org.http4k.core.then
import org.http4k.format.Jackson
import org.http4k.lens.LensFailure
import org.http4k.routing.Router
import org.http4k.routing.RoutingHttpHandler
import org.http4k.routing.bind
import org.http4k.routing.orElse
import org.http4k.routing.routes
import org.slf4j.LoggerFactory
import cityref.generated.models.Error as ErrorBody

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
    service: CityService,
    telemetry: Telemetry,
): HttpHandler =
    telemetry.logRequests
        .then(telemetry.recordDuration { request -> route(request.uri.path, request.target) })
        .then(CatchAppErrors)
        .then(RejectLongTargets)
        .then(routes(telemetry::scrape, service))

/** The `http_route` label: the listed path the request matched, `""` for anything else (and a 414). */
fun route(
    path: String,
    target: String,
): String = if (path in LISTED_PATHS && target.length <= MAX_REQUEST_TARGET) path else ""

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
    service: CityService,
): RoutingHttpHandler =
    routes(
        listedPath("/city/v1/get") { request -> jsonResponse(OK, service.getCity(cityQuery(request))) },
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

/** The error's JSON body (`{"message":…}`), with `Allow` for a 405. */
fun AppError.toResponse(): Response =
    jsonResponse(status, ErrorBody(message))
        .let { if (this is AppError.MethodNotAllowed) it.header("Allow", "GET, HEAD") else it }

private val log = LoggerFactory.getLogger("cityref.errors")

/**
 * Renders every [AppError], the query lenses' [LensFailure] (as the contract's 400) and, as a last
 * resort, any other exception (500, logged).
 */
val CatchAppErrors =
    Filter { next ->
        { request ->
            try {
                next(request)
            } catch (e: AppError) {
                e.toResponse()
            } catch (e: LensFailure) {
                AppError.BadRequest(e.problems()).toResponse()
            } catch (e: Exception) {
                log.error("unhandled error", e)
                AppError.Internal.toResponse()
            }
        }
    }

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
