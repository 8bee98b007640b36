package cityref

import cityref.generated.models.City
import cityref.generated.models.Health
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpMethod
import io.ktor.http.HttpStatusCode
import io.ktor.http.content.OutgoingContent
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationCallPipeline
import io.ktor.server.application.call
import io.ktor.server.application.install
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.request.httpMethod
import io.ktor.server.request.uri
import io.ktor.server.response.header
import io.ktor.server.response.respond
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import org.slf4j.LoggerFactory
import cityref.generated.models.Error as ErrorBody

/** Compact JSON, keys in declaration (= schema) order, non-ASCII written literally. */
private val json = Json { encodeDefaults = true }

/** `Content-Type: application/json`, exactly: no charset parameter. */
private val JSON_TYPE = ContentType.Application.Json
private val METRICS_TYPE = ContentType.parse(METRICS_CONTENT_TYPE)

/** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
private val OPENAPI_JSON: ByteArray = object {}.javaClass.getResourceAsStream("/openapi.json")!!.readBytes()

private val log = LoggerFactory.getLogger("cityref.handler")

/** Longest request target (path and query as sent) answered normally. */
const val MAX_REQUEST_TARGET = 8192

/** The listed paths; anything else is 404, whatever the method. */
val LISTED_PATHS = setOf("/city/v1/get", "/health", "/api-docs", "/metrics")

/** The application: telemetry, the error contract and the four listed paths. */
fun Application.cityref(
    repository: CityLookup,
    metrics: Metrics,
    inFlight: java.util.concurrent.atomic.AtomicInteger =
        java.util.concurrent.atomic
            .AtomicInteger(),
) {
    install(StatusPages) {
        exception<AppError> { call, error -> call.respondError(error) }
        exception<Throwable> { call, error ->
            log.error("unhandled error", error)
            call.respondError(AppError.Internal)
        }
        // Safety net: a call nothing answered.
        status(HttpStatusCode.NotFound) { call, _ -> call.respondError(AppError.NoSuchResource) }
    }
    install(RequestTelemetry) {
        this.metrics = metrics
        this.inFlight = inFlight
    }

    // Dispatch on the path exactly as sent. Ktor's Routing is not used: it decodes the query
    // eagerly when it runs a route (RoutingRequest.queryParameters, Ktor 3.5.2) and throws
    // BadRequestException for `%zz` before the handler can apply the contract's per-parameter
    // rules, and it normalises paths the contract wants unknown.
    val handlers: Map<String, suspend (ApplicationCall) -> Unit> =
        mapOf(
            "/city/v1/get" to { call ->
                val query = parseCityQuery(call.request.uri.substringAfter('?', ""))
                call.respondBody(HttpStatusCode.OK, JSON_TYPE, encode(City.serializer(), getCity(repository, query)))
            },
            "/health" to { call ->
                call.respondBody(HttpStatusCode.OK, JSON_TYPE, encode(Health.serializer(), Health(Health.Status.UP)))
            },
            "/api-docs" to { call -> call.respondBody(HttpStatusCode.OK, JSON_TYPE, OPENAPI_JSON) },
            "/metrics" to { call ->
                call.respondBody(HttpStatusCode.OK, METRICS_TYPE, metrics.scrape().toByteArray(Charsets.UTF_8))
            },
        )
    check(handlers.keys == LISTED_PATHS)
    intercept(ApplicationCallPipeline.Call) {
        // A request Wire judged on the wire (malformed, header section too large, target cut).
        wireRefusal(call.request.headers[Wire.HEADER])?.let { throw it }
        // The request target as sent (Netty hands it over undecoded, one char per byte).
        if (call.request.uri.length > MAX_REQUEST_TARGET) throw AppError.UriTooLong
        val handler = handlers[call.rawPath] ?: throw AppError.NoSuchResource
        // The method is checked before the parameters; HEAD is GET without the body.
        when (call.request.httpMethod) {
            HttpMethod.Get, HttpMethod.Head -> handler(call)
            else -> throw AppError.MethodNotAllowed
        }
    }
}

private fun <T> encode(
    serializer: KSerializer<T>,
    value: T,
): ByteArray = json.encodeToString(serializer, value).toByteArray(Charsets.UTF_8)

suspend fun ApplicationCall.respondError(error: AppError) {
    if (error is AppError.MethodNotAllowed) response.header(HttpHeaders.Allow, "GET, HEAD")
    respondBody(error.status, JSON_TYPE, encode(ErrorBody.serializer(), ErrorBody(error.message)))
}

/**
 * The body as bytes with exactly [type] (Ktor's text responses would add `; charset=UTF-8`).
 * HEAD gets the same status and headers, Content-Length included, and no body.
 */
suspend fun ApplicationCall.respondBody(
    status: HttpStatusCode,
    type: ContentType,
    bytes: ByteArray,
) {
    if (request.httpMethod == HttpMethod.Head) {
        respond(
            object : OutgoingContent.NoContent() {
                override val status = status
                override val contentType = type
                override val contentLength = bytes.size.toLong()
            },
        )
    } else {
        respond(
            object : OutgoingContent.ByteArrayContent() {
                override val status = status
                override val contentType = type
                override val contentLength = bytes.size.toLong()

                override fun bytes() = bytes
            },
        )
    }
}
