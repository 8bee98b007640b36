package cityref;

import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.instrumentation.api.instrumenter.Instrumenter;
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerAttributesExtractor;
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerAttributesGetter;
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRoute;
import io.opentelemetry.instrumentation.api.semconv.http.HttpServerRouteSource;
import io.opentelemetry.instrumentation.api.semconv.http.HttpSpanNameExtractor;
import io.opentelemetry.instrumentation.api.semconv.http.HttpSpanStatusExtractor;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * OpenTelemetry tracing (the spec's "Tracing"), made only when OTEL_TRACES_EXPORTER is {@code otlp}:
 * the SDK as its autoconfigure module builds it from the OTEL_* variables ({@link #sdk}), and one
 * SERVER span per request through the OpenTelemetry instrumentation API's {@link Instrumenter} with
 * the HTTP semantic conventions' extractors: a routing {@link Filter} (Helidon's extension point
 * around every routed request) and {@link #rejected} for what Helidon refuses before routing (its
 * direct handlers). Helidon 4.4.0's own tracing modules are not in the registry (README.md).
 */
public final class Tracing implements Filter {
    /** The SDK's flush on shutdown, at most this long (the spec: exit within 15 s of SIGTERM). */
    static final long SHUTDOWN_MS = 3_000;

    private final Instrumenter<Exchange, Integer> instrumenter;

    public Tracing(OpenTelemetry openTelemetry) {
        HttpServerAttributesGetter<Exchange, Integer> getter = new Getter();
        this.instrumenter = Instrumenter.<Exchange, Integer>builder(
                        openTelemetry, "cityref", HttpSpanNameExtractor.create(getter))
                .setSpanStatusExtractor(HttpSpanStatusExtractor.create(getter))
                .addAttributesExtractor(HttpServerAttributesExtractor.create(getter))
                // the listed path is known once the transport's filter has matched it: HttpServerRoute
                // then renames the span and sets http.route (see filter)
                .addContextCustomizer(HttpServerRoute.create(getter))
                .buildServerInstrumenter(new HeaderGetter());
    }

    /**
     * The SDK from the OpenTelemetry variables (OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER*,
     * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, ...), read by the SDK's autoconfigure
     * module itself. Defaults of ours, which the variables still override: only traces (the metrics
     * and logs exporters {@code none}; the SDK's default is {@code otlp}), and OTLP over
     * {@code http/protobuf}, the spec's default (the SDK's is {@code grpc}, for which the JDK sender
     * has no transport). Not the global instance, and no shutdown hook of its own: {@link #shutdown}
     * runs in the service's stop.
     */
    public static OpenTelemetrySdk sdk() {
        return AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of(
                        "otel.metrics.exporter", "none",
                        "otel.logs.exporter", "none",
                        "otel.exporter.otlp.protocol", "http/protobuf"))
                .disableShutdownHook()
                .build()
                .getOpenTelemetrySdk();
    }

    /** Ends the SDK: spans ended so far are exported (at most {@link #SHUTDOWN_MS}). */
    public static void shutdown(OpenTelemetrySdk sdk) {
        sdk.shutdown().join(SHUTDOWN_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * One SERVER span around the rest of the routing, the context current while it runs (so the
     * Elasticsearch client's spans are its children); the caller's {@code traceparent} is its parent.
     * Named and labelled with the listed path the transport matched (Telemetry's route), if any.
     */
    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        Exchange exchange = Exchange.of(req.prologue(), req.headers());
        Context parent = Context.current();
        if (!instrumenter.shouldStart(parent, exchange)) {
            chain.proceed();
            return;
        }
        Context context = instrumenter.start(parent, exchange);
        Throwable error = null;
        try (Scope _ = context.makeCurrent()) {
            chain.proceed();
        } catch (RuntimeException | Error e) {
            error = e;
            throw e;
        } finally {
            Telemetry.route(req)
                    .ifPresent(route -> HttpServerRoute.update(context, HttpServerRouteSource.CONTROLLER, route));
            // a response never sent (a filter failed) counts as 500, as in Telemetry
            instrumenter.end(context, exchange, res.isSent() ? res.status().code() : 500, error);
        }
    }

    /**
     * The span of a request Helidon refused before routing (its parser, its limits): method, target
     * and headers as far as Helidon read them, its status, no route.
     */
    public void rejected(String method, String target, Headers headers, int status) {
        int query = target.indexOf('?');
        Exchange exchange = query < 0
                ? new Exchange(method, target, null, headers)
                : new Exchange(method, target.substring(0, query), target.substring(query + 1), headers);
        Context parent = Context.current();
        if (instrumenter.shouldStart(parent, exchange)) {
            instrumenter.end(instrumenter.start(parent, exchange), exchange, status, null);
        }
    }

    /** What a span is made of: the request line's parts and the header fields. */
    record Exchange(String method, String path, String query, Headers headers) {
        static Exchange of(HttpPrologue prologue, Headers headers) {
            String query = prologue.query().rawValue();
            return new Exchange(
                    prologue.method().text(), prologue.uriPath().rawPath(), query.isEmpty() ? null : query, headers);
        }
    }

    /** The incoming {@code traceparent} (and {@code tracestate}, {@code baggage}) for the propagator. */
    private static final class HeaderGetter implements TextMapGetter<Exchange> {
        @Override
        public String get(Exchange carrier, String key) {
            return carrier == null
                    ? null
                    : carrier.headers().first(HeaderNames.create(key)).orElse(null);
        }
    }

    /** The stable HTTP semantic conventions' attributes, read from an {@link Exchange} and its status. */
    private static final class Getter implements HttpServerAttributesGetter<Exchange, Integer> {
        @Override
        public String getHttpRequestMethod(Exchange request) {
            return request.method();
        }

        @Override
        public List<String> getHttpRequestHeader(Exchange request, String name) {
            return request.headers().values(HeaderNames.create(name));
        }

        @Override
        public Integer getHttpResponseStatusCode(Exchange request, Integer status, Throwable error) {
            return status;
        }

        @Override
        public List<String> getHttpResponseHeader(Exchange request, Integer status, String name) {
            return List.of();
        }

        @Override
        public String getUrlScheme(Exchange request) {
            return "http"; // the service listens on plain HTTP only
        }

        @Override
        public String getUrlPath(Exchange request) {
            return request.path();
        }

        @Override
        public String getUrlQuery(Exchange request) {
            return request.query();
        }
    }
}
