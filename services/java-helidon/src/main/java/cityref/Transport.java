package cityref;

import cityref.generated.model.Error;
import cityref.generated.model.Health;
import io.helidon.config.Config;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.NotFoundException;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.cfg.EnumFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The transport: the server's settings, the routing ({@code Connection: close}, tracing when on, telemetry, the
 * request-target guard, the four listed paths, the error contract), and the direct handlers for what
 * Helidon rejects before routing.
 */
public final class Transport {
    /** Longest request target (path and query as sent) answered normally. */
    public static final int MAX_REQUEST_TARGET = 8192;
    /** The listed paths; anything else is 404, whatever the method. */
    public static final Set<String> LISTED_PATHS = Set.of("/city/v1/get", "/health", "/api-docs", "/metrics");

    private static final Logger LOG = LoggerFactory.getLogger(Transport.class);
    /** {@code Content-Type: application/json}, exactly (no charset parameter). */
    static final String JSON = "application/json";
    /** Renders the generated models (see {@link #json}); thread-safe, built once. */
    private static final ObjectWriter JSON_WRITER = JsonMapper.builder()
            .disable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY) // Jackson 3's default sorts them
            .enable(EnumFeature.WRITE_ENUMS_USING_TO_STRING)
            .build()
            .writer();
    /** The contract, byte for byte (generated/openapi.json, packaged as a resource). */
    private static final byte[] OPENAPI_JSON = resource("/openapi.json");

    private Transport() {}

    /**
     * Registers everything on {@code routing}; {@code tracing} (null when tracing is off) spans every
     * routed request.
     */
    public static void routing(HttpRouting.Builder routing, CityService service, Telemetry telemetry, Tracing tracing) {
        byte[] health = json(new Health(Health.StatusEnum.UP));
        routing.addFilter(Transport::closeWhenAsked);
        if (tracing != null) {
            routing.addFilter(tracing);
        }
        routing.addFilter(telemetry)
                .addFilter((chain, req, res) -> {
                    // The request target as sent: 414 before anything else, then exact path matching
                    // (Helidon's router matches the decoded, normalised path: `//`, `.`, `;x=1`).
                    String target = Telemetry.target(req.prologue());
                    if (target.length() > MAX_REQUEST_TARGET) {
                        sendError(req, res, AppError.uriTooLong());
                    } else if (!LISTED_PATHS.contains(req.prologue().uriPath().rawPath())) {
                        sendError(req, res, AppError.noSuchResource());
                    } else {
                        Telemetry.matched(req, req.prologue().uriPath().rawPath());
                        chain.proceed();
                    }
                })
                .error(AppError.class, Transport::sendError)
                .error(NotFoundException.class, (req, res, e) -> sendError(req, res, AppError.noSuchResource()))
                .error(Exception.class, (req, res, e) -> {
                    LOG.error("unhandled error", e);
                    sendError(req, res, AppError.internal());
                });
        routing.register("/city/v1/get", new CityHttpService(service));
        route(routing, "/health", (req, res) -> send(req, res, Status.OK_200, JSON, health));
        route(routing, "/api-docs", (req, res) -> send(req, res, Status.OK_200, JSON, OPENAPI_JSON));
        route(
                routing,
                "/metrics",
                (req, res) -> send(
                        req,
                        res,
                        Status.OK_200,
                        Telemetry.METRICS_CONTENT_TYPE,
                        telemetry.scrape().getBytes(StandardCharsets.UTF_8)));
    }

    /** GET and HEAD run {@code handler} (HEAD without the body); any other method is 405. */
    static void route(HttpRules routing, String path, io.helidon.webserver.http.Handler handler) {
        routing.get(path, handler).head(path, handler).any(path, (req, res) -> {
            throw AppError.methodNotAllowed();
        });
    }

    /**
     * A generated model as the contract's JSON: Jackson over its fields, in declaration (= schema)
     * order, compact, UTF-8 with non-ASCII written literally; enums by their value. A field the
     * spec adds reaches the wire by regenerating the model.
     */
    static byte[] json(Object model) {
        return JSON_WRITER.writeValueAsBytes(model);
    }

    /** An {@link AppError} as the contract's {@code {"message":...}} body (405 with {@code Allow}). */
    static void sendError(ServerRequest req, ServerResponse res, AppError error) {
        if (error.status() == Status.METHOD_NOT_ALLOWED_405.code()) {
            res.header(HeaderNames.ALLOW, "GET, HEAD");
        }
        send(req, res, Status.create(error.status()), JSON, json(new Error(error.getMessage())));
    }

    /**
     * The body as bytes with exactly {@code contentType}. HEAD gets the same status and headers,
     * {@code Content-Length} included, and no body (Helidon leaves HEAD to the application).
     */
    static void send(ServerRequest req, ServerResponse res, Status status, String contentType, byte[] body) {
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, contentType);
        if (Method.HEAD.equals(req.prologue().method())) {
            res.header(HeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
            res.send();
        } else {
            res.send(body);
        }
    }

    /**
     * The first filter: {@code Connection: close} (the token, in any case, also in a list) closes the
     * connection once the response is sent. Helidon 4.4.0 answers such a request with
     * {@code Connection: close} but then reads the next request on the same connection (only an
     * exact {@code close} value is recognised at all); {@link CloseConnectionException} is its own way
     * to end a connection from routing.
     */
    static void closeWhenAsked(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        boolean close = req.headers().values(HeaderNames.CONNECTION).stream()
                .flatMap(value -> Arrays.stream(value.split(",")))
                .anyMatch(token -> token.trim().equalsIgnoreCase("close"));
        if (!close) {
            chain.proceed();
            return;
        }
        res.header(HeaderNames.CONNECTION, "close");
        chain.proceed();
        if (res.isSent()) {
            throw new CloseConnectionException("the client asked for Connection: close");
        }
    }

    /**
     * Requests Helidon rejects before routing (its own parser and limits): its status, connection
     * handling and default answer, except that a 400 and a 414 get the contract's JSON body (whatever
     * the method: the request could not be read). Logged and counted like every request, and
     * spanned when tracing is on ({@code tracing} not null).
     */
    static DirectHandlers directHandlers(Telemetry telemetry, Tracing tracing) {
        DirectHandler handler = (request, eventType, status, headers, message) -> {
            telemetry.observeRejected(request.method(), request.path(), status.code());
            if (tracing != null) {
                tracing.rejected(request.method(), request.path(), request.headers(), status.code());
            }
            AppError error = status.code() == Status.BAD_REQUEST_400.code()
                    ? AppError.malformed()
                    : status.code() == Status.REQUEST_URI_TOO_LONG_414.code() ? AppError.uriTooLong() : null;
            if (error == null) {
                return DirectHandler.defaultHandler().handle(request, eventType, status, headers, message);
            }
            return DirectHandler.TransportResponse.builder()
                    .status(status)
                    .headers(headers)
                    .header(HeaderNames.CONTENT_TYPE, JSON)
                    .entity(json(new Error(error.getMessage())))
                    .build();
        };
        DirectHandlers.Builder handlers = DirectHandlers.builder();
        for (DirectHandler.EventType type : DirectHandler.EventType.values()) {
            handlers.addHandler(type, handler);
        }
        return handlers.build();
    }

    private static byte[] resource(String name) {
        try (InputStream in = Transport.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The server from Helidon's {@code server} configuration (application.yaml: each setting that differs
     * from Helidon's default, README.md) and the direct handlers, which are code; {@code tracing} is null
     * when tracing is off.
     */
    static WebServerConfig.Builder server(
            WebServerConfig.Builder server, Config config, Telemetry telemetry, Tracing tracing) {
        return server.config(config).directHandlers(directHandlers(telemetry, tracing));
    }
}
