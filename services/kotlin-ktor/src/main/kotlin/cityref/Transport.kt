package cityref

import cityref.generated.models.Health
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationCallPipeline
import io.ktor.server.application.call
import io.ktor.server.application.install
import io.ktor.server.engine.connector
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.plugins.autohead.AutoHeadResponse
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.request.uri
import io.ktor.server.response.header
import io.ktor.server.response.respondBytes
import io.ktor.server.response.respondText
import io.ktor.server.routing.Route
import io.ktor.server.routing.RouteSelector
import io.ktor.server.routing.RouteSelectorEvaluation
import io.ktor.server.routing.RoutingContext
import io.ktor.server.routing.RoutingResolveContext
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.context.Context
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRoute
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRouteSource
import io.opentelemetry.instrumentation.ktor.v3_0.KtorServerTelemetry
import kotlinx.serialization.json.Json
import org.slf4j.LoggerFactory
import cityref.generated.models.Error as ErrorBody

/** Compact JSON, keys in declaration (= schema) order, non-ASCII written literally. */
private val json = Json { encodeDefaults = true }

/** `Content-Type: application/json`, exactly: no charset parameter. */
private val JSON_TYPE = ContentType.Application.Json

/** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
private val OPENAPI_JSON: ByteArray = object {}.javaClass.getResourceAsStream("/openapi.json")!!.readBytes()

private val log = LoggerFactory.getLogger("cityref.Transport")

/**
 * Netty's decoder limits (defaults 4096 and 8192): a request line and a header section of up to
 * 64 KiB each are read, so that targets up to that length reach the application's JSON 414.
 */
private const val MAX_INITIAL_LINE = 65536
private const val MAX_HEADER_SIZE = 65536

/** The raw request target's path, as sent (no decoding, no normalisation). */
private val ApplicationCall.rawPath: String get() = request.uri.substringBefore('?')

/** The `http_route` label: the listed path the call matched, `""` for anything else (and a 414). */
private fun ApplicationCall.route(): String = routeOf(rawPath, request.uri)

/**
 * The server: Ktor's Netty engine on `0.0.0.0:PORT`, with Netty's decoder limits and the engine
 * settings below (README.md lists each with its reason), running [module]. Its stop is Ktor's, with
 * Ktor's default grace period and timeout (1 s, 5 s): it closes the listening channels, then shuts the
 * event loops down, which closes the open connections at once, calls in flight included
 * (docs/upstream/ktor-netty-stop-aborts-calls.md).
 */
fun cityrefServer(
    port: Int,
    module: Application.() -> Unit,
) = embeddedServer(Netty, configure = {
    connector {
        host = "0.0.0.0"
        this.port = port
    }
    maxInitialLineLength = MAX_INITIAL_LINE
    maxHeaderSize = MAX_HEADER_SIZE
    // Calls run on the worker event loop that read them, not on a separate call group: one
    // thread hop less per request (Ktor's `shareWorkGroup`; README.md, profile).
    shareWorkGroup = true
}, module = module)

/**
 * The application: telemetry (with [openTelemetry], tracing: kotlin-shared's [Tracing], on only with
 * `OTEL_TRACES_EXPORTER=otlp`), the error contract, the target limit and the four listed paths.
 */
fun Application.cityref(
    service: CityService,
    registry: PrometheusMeterRegistry,
    openTelemetry: OpenTelemetry? = null,
) {
    // OpenTelemetry's own Ktor server plugin (README.md, "Tracing"): a server span per call, from the
    // caller's `traceparent`, current in the call's coroutines (so the Elasticsearch client's span is
    // its child). Only when tracing is on: off, the application is the untraced one.
    if (openTelemetry != null) install(KtorServerTelemetry) { setOpenTelemetry(openTelemetry) }
    telemetry(registry) { call -> call.route() }
    // HEAD is routed as GET and answered with GET's status and headers, Content-Length included.
    install(AutoHeadResponse)
    install(StatusPages) {
        exception<AppError> { call, error -> call.respondError(error) }
        // Ktor's router decodes the whole query once a route matched (RoutingCall's constructor reads
        // the call's parameters: `?x=%zz` fails, whichever parameter it is in): Ktor's own refusal,
        // answered as the contract's JSON for a request the framework refuses
        // (docs/upstream/ktor-query-decoded-eagerly.md).
        exception<BadRequestException> { call, _ -> call.respondError(AppError.Malformed) }
        exception<Throwable> { call, error ->
            log.error("unhandled error", error)
            call.respondError(AppError.Internal)
        }
        // Ktor's own 400 for a request with more than one Host header. (No status page for its 404 and
        // 405: one answers a second time inside the first answer's send, and MicrometerMetrics times both.)
        status(HttpStatusCode.BadRequest) { call, _ -> call.respondError(AppError.Malformed) }
    }
    // Before routing, on the request target as Netty hands it over (undecoded, one char per byte):
    // the 414, then the 404 of a path not listed exactly as sent (Ktor's router would decode and
    // normalise it); answered and finished here, as Ktor's own Host check does.
    val traced = openTelemetry != null
    intercept(ApplicationCallPipeline.Plugins) {
        val refusal =
            when {
                call.request.uri.length > MAX_REQUEST_TARGET -> AppError.UriTooLong
                call.rawPath !in LISTED_PATHS -> AppError.NoSuchResource
                else -> null
            }
        if (refusal != null) {
            call.respondError(refusal)
            finish()
        } else if (traced) {
            // The server span's route: the listed path whatever the method (a 405 too), given through
            // the instrumentation API as a framework's controller gives it; the plugin's own (set only
            // once the router chose a handler) ranks below it (HttpServerRouteSource.SERVER).
            call.route().takeIf { it.isNotEmpty() }?.let {
                HttpServerRoute.update(Context.current(), HttpServerRouteSource.CONTROLLER, it)
            }
        }
    }
    routing {
        exactGet("/city/v1/get") {
            call.respondJson(service.getCity(parseCityQuery(call.request.uri.substringAfter('?', ""))))
        }
        exactGet("/health") { call.respondJson(Health(Health.Status.UP)) }
        exactGet("/api-docs") { call.respondBytes(OPENAPI_JSON, JSON_TYPE) }
        exactGet("/metrics") { call.respondText(registry.scrape()) }
    }
}

/** GET (and, through AutoHeadResponse, HEAD) on [path] exactly as sent; any other method is 405. */
private fun Route.exactGet(
    path: String,
    body: suspend RoutingContext.() -> Unit,
) {
    check(path in LISTED_PATHS)
    createChild(ExactPath(path)).apply {
        get(body)
        handle { throw AppError.MethodNotAllowed }
    }
}

/**
 * Matches the request target's path exactly as sent: Ktor's path segments are percent-decoded and
 * skip empty segments (`/city/v1/%67et`, `//city/v1/get` would match), which the contract wants unknown.
 */
private class ExactPath(
    private val path: String,
) : RouteSelector() {
    override suspend fun evaluate(
        context: RoutingResolveContext,
        segmentIndex: Int,
    ): RouteSelectorEvaluation =
        if (segmentIndex == 0 && context.call.rawPath == path) {
            RouteSelectorEvaluation.Success(RouteSelectorEvaluation.qualityConstant, segmentIncrement = context.segments.size)
        } else {
            RouteSelectorEvaluation.FailedPath
        }

    override fun toString() = path
}

/** 414 with RFC 9110's reason phrase (Ktor's `RequestURITooLong` has RFC 2616's "Request-URI Too Long"). */
private val URI_TOO_LONG = HttpStatusCode(414, "URI Too Long")

private suspend fun ApplicationCall.respondError(error: AppError) {
    if (error is AppError.MethodNotAllowed) response.header(HttpHeaders.Allow, "GET, HEAD")
    val status = if (error.status == URI_TOO_LONG.value) URI_TOO_LONG else HttpStatusCode.fromValue(error.status)
    respondJson(ErrorBody(error.message), status)
}

/**
 * [value] as the contract's JSON, exactly `application/json`. Not through Ktor's ContentNegotiation:
 * it answers 406 to an `Accept` without JSON, and an `Accept-Charset` changes the body's encoding and
 * adds a `charset` to the type (README.md, "JSON").
 */
private suspend inline fun <reified T> ApplicationCall.respondJson(
    value: T,
    status: HttpStatusCode = HttpStatusCode.OK,
) = respondBytes(json.encodeToString(value).toByteArray(), JSON_TYPE, status)
