package cityref

import cityref.generated.models.City
import cityref.generated.models.Health
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.http.content.OutgoingContent
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationCallPipeline
import io.ktor.server.application.call
import io.ktor.server.application.install
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.plugins.autohead.AutoHeadResponse
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.request.uri
import io.ktor.server.response.header
import io.ktor.server.response.respond
import io.ktor.server.routing.RouteSelector
import io.ktor.server.routing.RouteSelectorEvaluation
import io.ktor.server.routing.RoutingResolveContext
import io.ktor.server.routing.get
import io.ktor.server.routing.routing
import io.netty.buffer.Unpooled
import io.netty.channel.ChannelDuplexHandler
import io.netty.channel.ChannelFutureListener
import io.netty.channel.ChannelHandlerContext
import io.netty.channel.ChannelPromise
import io.netty.handler.codec.http.DefaultFullHttpResponse
import io.netty.handler.codec.http.FullHttpResponse
import io.netty.handler.codec.http.HttpObject
import io.netty.handler.codec.http.HttpRequest
import io.netty.handler.codec.http.HttpResponse
import io.netty.handler.codec.http.HttpResponseStatus
import io.netty.handler.codec.http.HttpStatusClass
import io.netty.handler.codec.http.HttpUtil
import io.netty.handler.codec.http.HttpVersion
import io.netty.handler.codec.http.LastHttpContent
import io.netty.handler.codec.http.TooLongHttpHeaderException
import io.netty.handler.codec.http.TooLongHttpLineException
import io.netty.util.ReferenceCountUtil
import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import org.slf4j.LoggerFactory
import java.util.concurrent.atomic.AtomicInteger
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

/** The raw request target's path, as sent (no decoding, no normalisation). */
val ApplicationCall.rawPath: String get() = request.uri.substringBefore('?')

/** The `http_route` label: the listed path the call matched, `""` for anything else (and a 414). */
private fun ApplicationCall.route(): String = rawPath.takeIf { it in LISTED_PATHS && request.uri.length <= MAX_REQUEST_TARGET } ?: ""

/** The application: telemetry, the error contract, the target limit and the four listed paths. */
fun Application.cityref(
    service: CityService,
    metrics: Metrics,
    inFlight: AtomicInteger = AtomicInteger(),
) {
    val pages: Map<String, suspend (ApplicationCall) -> Unit> =
        mapOf(
            "/city/v1/get" to { call ->
                val query = parseCityQuery(call.request.uri.substringAfter('?', ""))
                call.respondBody(HttpStatusCode.OK, JSON_TYPE, encode(City.serializer(), service.getCity(query)))
            },
            "/health" to { call ->
                call.respondBody(HttpStatusCode.OK, JSON_TYPE, encode(Health.serializer(), Health(Health.Status.UP)))
            },
            "/api-docs" to { call -> call.respondBody(HttpStatusCode.OK, JSON_TYPE, OPENAPI_JSON) },
            "/metrics" to { call ->
                call.respondBody(HttpStatusCode.OK, METRICS_TYPE, metrics.scrape().toByteArray(Charsets.UTF_8))
            },
        )
    check(pages.keys == LISTED_PATHS)

    install(RequestTelemetry) {
        this.metrics = metrics
        this.inFlight = inFlight
        routeOf = { call -> call.route() }
    }
    // HEAD is routed as GET and answered with GET's status and headers, Content-Length included.
    install(AutoHeadResponse)
    install(StatusPages) {
        exception<AppError> { call, error -> call.respondError(error) }
        // Ktor's router decodes before any handler runs: the path's segments while it matches
        // (RoutingResolveContext: `/%zz` fails) and, once a route matched, the whole query
        // (RoutingCall's parameters, Netty's QueryStringDecoder: `?x=%zz` fails). The contract never
        // decodes the path for matching and judges each query parameter on its own: such a request
        // gets what its route answers (only GET and HEAD get this far on a listed path: the router
        // answers other methods 405 before it decodes the query).
        exception<BadRequestException> { call, _ ->
            try {
                pages[call.rawPath]?.invoke(call) ?: throw AppError.NoSuchResource
            } catch (error: AppError) {
                call.respondError(error)
            }
        }
        exception<Throwable> { call, error ->
            log.error("unhandled error", error)
            call.respondError(AppError.Internal)
        }
        // Ktor's own answers (ours are exceptions, rendered above): no route for the path, none for
        // the method on a listed path, and its 400 for a request with more than one Host header.
        status(HttpStatusCode.NotFound) { call, _ -> call.respondError(AppError.NoSuchResource) }
        status(HttpStatusCode.MethodNotAllowed) { call, _ -> call.respondError(AppError.MethodNotAllowed) }
        status(HttpStatusCode.BadRequest) { call, _ -> call.respondError(AppError.Malformed) }
    }
    // 414 before anything else, on the request target as Netty hands it over (undecoded, one char
    // per byte); answered and finished here, as Ktor's own Host check does.
    intercept(ApplicationCallPipeline.Plugins) {
        if (call.request.uri.length > MAX_REQUEST_TARGET) {
            call.respondError(AppError.UriTooLong)
            finish()
        }
    }
    routing {
        for ((path, page) in pages) {
            createChild(ExactPath(path)).get { page(call) }
        }
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

private fun <T> encode(
    serializer: KSerializer<T>,
    value: T,
): ByteArray = json.encodeToString(serializer, value).toByteArray(Charsets.UTF_8)

suspend fun ApplicationCall.respondError(error: AppError) {
    if (error is AppError.MethodNotAllowed) response.header(HttpHeaders.Allow, "GET, HEAD")
    respondBody(error.status, JSON_TYPE, encode(ErrorBody.serializer(), ErrorBody(error.message)))
}

/** The body as bytes with exactly [type] (Ktor's text responses would add `; charset=UTF-8`). */
suspend fun ApplicationCall.respondBody(
    status: HttpStatusCode,
    type: ContentType,
    bytes: ByteArray,
) = respond(
    object : OutgoingContent.ByteArrayContent() {
        override val status = status
        override val contentType = type
        override val contentLength = bytes.size.toLong()

        override fun bytes() = bytes
    },
)

/**
 * Ktor's `channelPipelineConfig` handler right after Netty's HTTP codec (Ktor's `codec` handler): it
 * sees decoded requests, never bytes, and answers the ones Ktor would answer wrongly, with the
 * contract's JSON, logged and counted; then the connection closes once the answers to the requests
 * before it are written, and nothing after it is read.
 *
 * * A request Netty's decoder could not read (`decoderResult().isFailure`; Netty reads nothing after
 *   it): 414 for a request line over Netty's `maxInitialLineLength`, 431 for a header section over
 *   `maxHeaderSize`, 400 otherwise. Left alone, Ktor answers it with a plain-text 400 that echoes
 *   Netty's message and says `Connection: close`, but keeps a keep-alive connection open (its
 *   response pipeline closes only when the request was not keep-alive).
 * * A version other than HTTP/1.0 and HTTP/1.1 (400): Netty reads any `HTTP/x.y`, and Ktor answers
 *   in the request's version (`HTTP/2.0 200 OK`), which no HTTP/1 client can frame.
 * * A GET with `Sec-WebSocket-Key1` and `Sec-WebSocket-Key2` and no `Content-Length` or chunked
 *   body (400): Netty reads the 8 bytes after its head as a hixie-76 body, which are the start of
 *   the next request (docs/upstream/netty-hixie76-body.md).
 *
 * After a request that does not keep the connection alive (`Connection: close`, HTTP/1.0 without
 * keep-alive) nothing more is read either: Ktor closes after its answer, but it has already
 * answered the requests pipelined behind it by then.
 */
class CodecErrors(
    private val metrics: Metrics,
) : ChannelDuplexHandler() {
    /** Requests handed on to Ktor and not answered yet. */
    private var unanswered = 0

    /** The last request handed on asked to close the connection after its answer. */
    private var lastRequest = false

    /** Nothing more is read: the connection closes once [unanswered] is 0. */
    private var stopped = false

    /** The refusal's answer, held until the answers before it are written. */
    private var refusal: FullHttpResponse? = null

    override fun channelRead(
        ctx: ChannelHandlerContext,
        msg: Any,
    ) {
        if (stopped) {
            ReferenceCountUtil.release(msg)
            return
        }
        val failure = (msg as? HttpObject)?.decoderResult()?.cause()
        if (msg is HttpRequest && (failure != null || unanswerable(msg))) {
            val error =
                when (failure) {
                    is TooLongHttpLineException -> AppError.UriTooLong
                    is TooLongHttpHeaderException -> AppError.HeaderFieldsTooLarge
                    else -> AppError.Malformed
                }
            metrics.record(msg.method().name(), "", error.status.value, 0)
            logRequest(msg.method().name(), msg.uri(), error.status.value, 0)
            refusal = errorResponse(error)
        } else if (failure == null) {
            if (msg is HttpRequest) {
                unanswered++
                lastRequest = !HttpUtil.isKeepAlive(msg)
            }
            val ends = msg is LastHttpContent
            ctx.fireChannelRead(msg)
            if (ends && lastRequest) stopped = true
            return
        }
        // A refused request, or a body Netty could not read (its request is answered first).
        ReferenceCountUtil.release(msg)
        stopped = true
        if (unanswered == 0) close(ctx)
    }

    override fun write(
        ctx: ChannelHandlerContext,
        msg: Any,
        promise: ChannelPromise,
    ) {
        ctx.write(msg, promise)
        val informational = msg is HttpResponse && msg.status().codeClass() == HttpStatusClass.INFORMATIONAL
        if (msg is LastHttpContent && !informational && --unanswered == 0 && stopped) close(ctx)
    }

    private fun close(ctx: ChannelHandlerContext) {
        val answer = refusal ?: Unpooled.EMPTY_BUFFER
        refusal = null
        ctx.writeAndFlush(answer).addListener(ChannelFutureListener.CLOSE)
    }

    private fun unanswerable(request: HttpRequest): Boolean =
        (request.protocolVersion() != HttpVersion.HTTP_1_1 && request.protocolVersion() != HttpVersion.HTTP_1_0) ||
            readsHixie76Body(request)

    private fun readsHixie76Body(request: HttpRequest): Boolean =
        request.method() == io.netty.handler.codec.http.HttpMethod.GET &&
            request.headers().contains("Sec-WebSocket-Key1") &&
            request.headers().contains("Sec-WebSocket-Key2") &&
            !request.headers().contains(HttpHeaders.ContentLength) &&
            !HttpUtil.isTransferEncodingChunked(request)

    private fun errorResponse(error: AppError): FullHttpResponse {
        val body = encode(ErrorBody.serializer(), ErrorBody(error.message))
        return DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus(error.status.value, error.status.description),
            Unpooled.wrappedBuffer(body),
        ).apply {
            headers()
                .set(HttpHeaders.ContentType, JSON_TYPE.toString())
                .set(HttpHeaders.ContentLength, body.size)
                .set(HttpHeaders.Connection, "close")
        }
    }
}
