package cityref

import cityref.generated.models.Health
import org.eclipse.jetty.http.HttpStatus
import org.eclipse.jetty.http.UriCompliance
import org.eclipse.jetty.server.Handler
import org.eclipse.jetty.server.HttpConfiguration
import org.eclipse.jetty.server.HttpConnectionFactory
import org.eclipse.jetty.server.Server
import org.eclipse.jetty.server.ServerConnector
import org.eclipse.jetty.server.handler.ErrorHandler
import org.eclipse.jetty.util.Callback
import org.eclipse.jetty.util.thread.QueuedThreadPool
import org.eclipse.jetty.util.thread.VirtualThreadPool
import org.http4k.core.Filter
import org.http4k.core.HttpHandler
import org.http4k.core.Method
import org.http4k.core.Method.GET
import org.http4k.core.Method.HEAD
import org.http4k.core.Request
import org.http4k.core.Response
import org.http4k.core.Status
import org.http4k.core.Status.Companion.OK
import org.http4k.core.then
import org.http4k.filter.ServerFilters
import org.http4k.format.Jackson
import org.http4k.routing.Router
import org.http4k.routing.RoutingHttpHandler
import org.http4k.routing.bind
import org.http4k.routing.orElse
import org.http4k.routing.routes
import org.http4k.server.Http4kServer
import org.http4k.server.Jetty
import org.http4k.server.ServerConfig.StopMode
import org.http4k.server.asServer
import org.http4k.server.supportedOrNull
import org.slf4j.LoggerFactory
import java.time.Duration
import cityref.generated.models.Error as ErrorBody
import org.eclipse.jetty.server.Request as JettyRequest
import org.eclipse.jetty.server.Response as JettyResponse

/** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
private val OPENAPI_JSON: ByteArray = Telemetry::class.java.getResourceAsStream("/openapi.json")!!.readBytes()

/**
 * The whole service as one [HttpHandler]: (with tracing on, the server span →) request log → duration
 * histogram → error rendering → request-target limit → the four listed paths.
 */
fun cityrefApp(
    service: CityService,
    telemetry: Telemetry,
): HttpHandler {
    val routeOf = { request: Request -> routeOf(request.uri.path, request.target) }
    val app =
        telemetry.logRequests
            .then(telemetry.recordDuration(routeOf))
            .then(catchErrors)
            .then(RejectLongTargets)
            .then(routes(telemetry::scrape, service))
    // Outermost, so that every answer http4k gives has its span, 404, 405 and 414 included.
    return telemetry.tracing?.filter(routeOf)?.then(app) ?: app
}

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
        listedPath("/metrics") { bytesResponse(OK, "text/plain; version=0.0.4; charset=utf-8", scrape().toByteArray()) },
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
    jsonResponse(Status.fromCode(status) ?: Status(status, ""), ErrorBody(message))
        .let { if (this is AppError.MethodNotAllowed) it.header("Allow", "GET, HEAD") else it }

private val log = LoggerFactory.getLogger("cityref.errors")

/**
 * http4k's catch-alls: the query lenses' failures as the contract's 400, every [AppError] as its
 * answer and, as a last resort, any other exception as the 500 (logged).
 */
private val catchErrors =
    ServerFilters
        .CatchAll { e -> (e as? AppError ?: AppError.Internal.also { log.error("unhandled error", e) }).toResponse() }
        .then(ServerFilters.CatchLensFailure { _, failure -> AppError.BadRequest(failure.problems()).toResponse() })

/**
 * Jetty's one limit for the request line and the header section together (default 8 KiB): a
 * request line and a header section of up to 64 KiB each are read, so that targets up to that length
 * reach the application's JSON 414. A longer head is Jetty's own 414 or 431 ([JsonErrors]).
 */
private const val MAX_REQUEST_HEADER = 128 * 1024

/** Listen backlog (pending connections the kernel keeps before Jetty accepts them). */
private const val ACCEPT_QUEUE = 1024

/**
 * Requests running at once on virtual threads (Jetty's `VirtualThreadPool` default is 200). The
 * spec lets 256 requests wait for Elasticsearch at once, each up to its timeout, so 200 would hold
 * the 201st request back until one of them ends, past its own timeout (the suite's burst of 300
 * lookups against a hanging Elasticsearch). Beyond 64 a request parks on the repository's permits,
 * which costs little; the bound stays so that 2048 connections cannot run 2048 requests at once.
 */
private const val MAX_REQUESTS_RUNNING = 1024

/**
 * [app] on http4k's stock `Jetty` server config, given the Jetty `Server` it runs on (its
 * constructor for that): Jetty 12's preferred shape for virtual threads (programming guide,
 * "Virtual Threads": a [QueuedThreadPool] whose virtual-threads executor is a bounded
 * [VirtualThreadPool]; unbounded, 2048 connections ran 2048 requests at once and the service died of
 * `OutOfMemoryError` under 512 MiB, README.md), one connector with the settings below, the JSON
 * [ErrorHandler], and [OtherMethods] in front of http4k's handler.
 */
fun cityrefServer(
    app: HttpHandler,
    port: Int,
    stopMode: StopMode,
    telemetry: Telemetry,
    virtualThreads: Boolean = true,
): Pair<Http4kServer, Server> {
    val threads =
        QueuedThreadPool().apply {
            name = "jetty"
            if (virtualThreads) virtualThreadsExecutor = VirtualThreadPool().apply { maxThreads = MAX_REQUESTS_RUNNING }
        }
    val httpConfig =
        HttpConfiguration().apply {
            requestHeaderSize = MAX_REQUEST_HEADER
            sendServerVersion = false
            // By default Jetty refuses ambiguous paths (`//x`, `/%2e/`, `;x=1` in a segment) with a
            // 400. The routes compare the raw path exactly and nothing maps paths to files, so such
            // paths may reach them (and be a JSON 404). A path that is not valid percent-encoding
            // (`/%zz`) is still Jetty's own 400.
            uriCompliance = UriCompliance.UNSAFE
            // No per-connection header-field cache: each connection's parser builds its own trie of
            // 1024 entries (about 35 KB) on its first request; at 2048 connections about 170 MB live,
            // and the service died of `OutOfMemoryError` under 512 MiB (README.md, "2048 connections").
            headerCacheSize = 0
        }
    val server = Server(threads)
    server.addConnector(
        ServerConnector(server, HttpConnectionFactory(httpConfig)).apply {
            this.port = port
            // Jetty leaves the listen backlog to the JDK's default of 50: a burst of new connections
            // then loses SYNs and waits a 1 s retransmit. Netty and Helidon ask for 1024.
            acceptQueueSize = ACCEPT_QUEUE
        },
    )
    server.errorHandler = JsonErrors
    val http4k = app.asServer(Jetty(port, stopMode, server))
    // Jetty's own API for a handler in front of the one the http4k config set (`Server.insertHandler`).
    server.insertHandler(OtherMethods(telemetry))
    return http4k to server
}

/**
 * http4k's `Method` is an enum: its Jetty adapter answers any other method (`FOO`) with a bare 501
 * before the application runs (`Http4kJettyHttpHandler`). This Jetty handler answers those requests
 * the contract's way (414, 404 or 405 with `Allow`), logged, counted and traced like every other.
 */
private class OtherMethods(
    private val telemetry: Telemetry,
) : Handler.Wrapper() {
    override fun handle(
        request: JettyRequest,
        response: JettyResponse,
        callback: Callback,
    ): Boolean {
        if (Method.supportedOrNull(request.method) != null) return super.handle(request, response, callback)
        val start = System.nanoTime()
        val path = request.httpURI.path
        val target = request.httpURI.pathQuery
        val route = routeOf(path, target)

        fun answer(): Response {
            val error =
                when {
                    target.length > MAX_REQUEST_TARGET -> AppError.UriTooLong
                    path !in LISTED_PATHS -> AppError.NoSuchResource
                    else -> AppError.MethodNotAllowed
                }
            val answer = error.toResponse()
            response.status = answer.status.code
            answer.headers.forEach { (name, value) -> if (value != null) response.headers.add(name, value) }
            telemetry.record(request.method, route, target, answer.status.code, Duration.ofNanos(System.nanoTime() - start))
            return answer
        }
        // Tracing on: its server span too, as every answer http4k gives has one.
        val answer =
            telemetry.tracing?.trace(
                TracedRequest(request.method, path, request.httpURI.query, route.ifEmpty { null }) { request.headers.getValuesList(it) },
                { it.status.code },
                ::answer,
            ) ?: answer()
        response.write(true, answer.body.payload, callback)
        return true
    }
}

/**
 * Jetty's `ErrorHandler`: what Jetty answers by itself (a request its parser refuses, a head over
 * [MAX_REQUEST_HEADER]) gets a JSON body: the contract's text for 400, 414 and 431, the status
 * line's reason otherwise. The status (but for the version refusals below) and the close are
 * Jetty's own. Jetty no longer has the request: it is neither logged nor counted.
 */
private object JsonErrors : ErrorHandler() {
    override fun handle(
        request: JettyRequest,
        response: JettyResponse,
        callback: Callback,
    ): Boolean {
        val status = request.getAttribute(ERROR_STATUS) as? Int ?: response.status
        val answer =
            when (status) {
                // Jetty's 505 (no version, "HTTP/0.9", or an unknown one) and 426 (`HTTP/2.0` on an
                // HTTP/1 connection) refuse the request line too; the spec's safety tier allows no 5xx.
                400, 505, 426 -> AppError.Malformed.toResponse()

                414 -> AppError.UriTooLong.toResponse()

                431 -> AppError.HeaderFieldsTooLarge.toResponse()

                else -> jsonResponse(Status(status, HttpStatus.getMessage(status)), ErrorBody(HttpStatus.getMessage(status)))
            }
        response.status = answer.status.code
        answer.headers.forEach { (name, value) -> if (value != null) response.headers.put(name, value) }
        response.write(true, answer.body.payload, callback)
        return true
    }
}
