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
import org.http4k.format.Jackson
import org.http4k.lens.LensFailure
import org.http4k.routing.Router
import org.http4k.routing.RoutingHttpHandler
import org.http4k.routing.bind
import org.http4k.routing.orElse
import org.http4k.routing.routes
import org.http4k.server.Http4kServer
import org.http4k.server.ServerConfig
import org.http4k.server.ServerConfig.StopMode
import org.http4k.server.supportedOrNull
import org.http4k.server.toJettyHandler
import org.slf4j.LoggerFactory
import java.time.Duration
import cityref.generated.models.Error as ErrorBody
import org.eclipse.jetty.server.Request as JettyRequest
import org.eclipse.jetty.server.Response as JettyResponse

/** Longest request target (path and query as sent) answered normally. */
const val MAX_REQUEST_TARGET = 8192

/** The listed paths; anything else is 404, whatever the method. */
val LISTED_PATHS = setOf("/city/v1/get", "/health", "/api-docs", "/metrics")

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
    val routeOf = { request: Request -> route(request.uri.path, request.target) }
    val app =
        telemetry.logRequests
            .then(telemetry.recordDuration(routeOf))
            .then(CatchAppErrors)
            .then(RejectLongTargets)
            .then(routes(telemetry::scrape, service))
    // Outermost, so that every answer http4k gives has its span, 404, 405 and 414 included.
    return telemetry.tracing?.filter(routeOf)?.then(app) ?: app
}

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
    jsonResponse(Status.fromCode(status) ?: Status(status, ""), ErrorBody(message))
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

/**
 * Jetty's one limit for the request line and the header section together (default 8 KiB): a
 * request line and a header section of up to 64 KiB each are read, so targets up to that length
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
 * http4k's stock `Jetty` server config, duplicated and modified as its KDoc invites:
 * a larger request-header buffer (Jetty answers an over-long target with its own 414 otherwise),
 * every request path accepted as sent,
 * no `Server` header, virtual threads, and [OtherMethods] in front of http4k.
 */
class CityrefJetty(
    private val port: Int,
    override val stopMode: StopMode,
    private val telemetry: Telemetry,
    private val virtualThreads: Boolean,
) : ServerConfig {
    /**
     * Jetty 12's preferred shape for virtual threads (programming guide, "Virtual Threads"): a
     * [QueuedThreadPool] for Jetty's own work whose virtual-threads executor is a [VirtualThreadPool],
     * which bounds the requests running at once ([MAX_REQUESTS_RUNNING]). An unbounded
     * virtual-thread-per-task executor let 2048 connections run 2048 requests at once, and the
     * service died of `OutOfMemoryError` under 1.5 CPUs / 512 MiB (README.md, "2048 connections").
     */
    val threadPool =
        QueuedThreadPool().apply {
            name = "jetty"
            if (virtualThreads) {
                virtualThreadsExecutor =
                    VirtualThreadPool().apply {
                        name = "jetty-vt"
                        maxThreads = MAX_REQUESTS_RUNNING
                    }
            }
        }

    /** Jetty's NIO selector threads (derived from the available processors). */
    var selectors = 0
        private set

    override fun toServer(http: HttpHandler): Http4kServer {
        val server = Server(threadPool)
        val httpConfig =
            HttpConfiguration().apply {
                requestHeaderSize = MAX_REQUEST_HEADER
                sendServerVersion = false
                // By default Jetty refuses ambiguous paths (`//x`, `/%2e/`, `;x=1` in a segment) with a
                // 400. The routes compare the raw path exactly and nothing maps paths to files, so such
                // paths may reach them (and be a JSON 404). A path that is not valid percent-encoding
                // (`/%zz`) is still Jetty's own 400.
                uriCompliance = UriCompliance.UNSAFE
                // No per-connection header-field cache. Each connection's parser builds its own trie
                // of HEADER_CACHE_SIZE (default 1024) on its first request, about 35 KB of heap. At the
                // benchmark's 2048 connections that was about 170 MB live, and the service died of
                // `OutOfMemoryError` under 512 MiB (README.md, "2048 connections"). The cache only saves re-parsing
                // repeated header values.
                headerCacheSize = 0
            }
        val connector =
            ServerConnector(server, HttpConnectionFactory(httpConfig)).apply {
                port = this@CityrefJetty.port
                // Jetty leaves the listen backlog to the JDK's default of 50: a burst of new connections
                // then loses SYNs and waits a 1 s retransmit. Netty and Helidon ask for 1024.
                acceptQueueSize = ACCEPT_QUEUE
            }
        selectors = connector.selectorManager.selectorCount
        server.addConnector(connector)
        server.errorHandler = JsonErrors(telemetry)
        server.handler = OtherMethods(http.toJettyHandler(withStatisticsHandler = stopMode is StopMode.Graceful), telemetry)
        if (stopMode is StopMode.Graceful) server.stopTimeout = stopMode.timeout.toMillis()
        return object : Http4kServer {
            override fun start() = apply { server.start() }

            override fun stop() = apply { server.stop() }

            override fun port() = if (port > 0) port else connector.localPort
        }
    }
}

/**
 * http4k's `Method` is an enum: its server adapters answer any other method (`FOO`) with a bare
 * 501 before the application runs. This Jetty handler answers those requests the contract's way
 * (414, 404 or 405 with `Allow`), logged, counted and traced like every other request.
 */
class OtherMethods(
    http4k: Handler,
    private val telemetry: Telemetry,
) : Handler.Wrapper(http4k) {
    override fun handle(
        request: JettyRequest,
        response: JettyResponse,
        callback: Callback,
    ): Boolean {
        if (Method.supportedOrNull(request.method) != null) return super.handle(request, response, callback)
        val start = System.nanoTime()
        val path = request.httpURI.path
        val target = request.httpURI.pathQuery
        val route = route(path, target)

        fun answer(): Response {
            val answer = answerOtherMethod(path, target).toResponse()
            response.status = answer.status.code
            answer.headers.forEach { (name, value) -> if (value != null) response.headers.add(name, value) }
            val nanos = System.nanoTime() - start
            telemetry.record(request.method, route, target, answer.status.code, Duration.ofNanos(nanos))
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
 * Jetty's own. Such a request is logged with an empty path: Jetty no longer has the target.
 */
class JsonErrors(
    private val telemetry: Telemetry,
) : ErrorHandler() {
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
        telemetry.record(request.method, "", "", answer.status.code, Duration.ZERO)
        response.write(true, answer.body.payload, callback)
        return true
    }
}
