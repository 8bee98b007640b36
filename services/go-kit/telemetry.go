package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/felixge/httpsnoop"
	"github.com/go-kit/kit/metrics"
	kitprometheus "github.com/go-kit/kit/metrics/prometheus"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// NewLogger is go-kit's JSON logger: one object per line with ts (RFC 3339, UTC, milliseconds),
// level (added by level.Info etc., lower case) and msg, plus the line's fields. Lines are
// written whole (SyncWriter), so concurrent requests never interleave.
func NewLogger(w io.Writer) log.Logger {
	logger := log.NewJSONLogger(log.NewSyncWriter(w))
	return log.With(logger, "ts", log.TimestampFormat(func() time.Time { return time.Now().UTC() },
		"2006-01-02T15:04:05.000Z07:00"))
}

// levelFilter keeps the lines at logLevel (a valid LOG_LEVEL) and above.
func levelFilter(logLevel LogLevel) level.Option {
	switch logLevel {
	case "error":
		return level.AllowError()
	case "warn":
		return level.AllowWarn()
	case "debug":
		return level.AllowDebug()
	default:
		return level.AllowInfo()
	}
}

// durationBuckets are the contract's histogram buckets (seconds).
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// NewRequestDuration registers OpenTelemetry's http.server.request.duration as the Prometheus
// histogram http_server_request_duration_seconds and returns it as a go-kit metric.
func NewRequestDuration(registerer prometheus.Registerer) metrics.Histogram {
	histogram := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_server_request_duration_seconds",
		Help:    "Duration of HTTP server requests.",
		Buckets: durationBuckets,
	}, []string{"http_request_method", "http_route", "http_response_status_code"})
	registerer.MustRegister(histogram)
	return kitprometheus.NewHistogram(histogram)
}

// maxLoggedPath: the logged path is cut to its first 8192 bytes (a 414's target, as the contract
// allows).
const maxLoggedPath = 8192

// Instrument is the outermost HTTP middleware: every request, whatever answered it (endpoint,
// 404, 405, 414), is observed in the histogram and logged once at info. It sits on HTTP rather than
// on the endpoints (go-kit's addsvc logs and counts in endpoint middleware) because the spec counts
// and logs the requests no endpoint sees: the mux's 404 and 405 and the 414 in front of it. The
// status and duration are httpsnoop's (the response-writer wrapper otelhttp uses too), which keeps
// the writer's optional interfaces.
func Instrument(next http.Handler, logger log.Logger, duration metrics.Histogram) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := httpsnoop.CaptureMetrics(next, w, r)
		duration.With(
			"http_request_method", methodLabel(r.Method),
			"http_route", routeLabel(r.Pattern),
			"http_response_status_code", strconv.Itoa(m.Code),
		).Observe(m.Duration.Seconds())
		path := r.RequestURI
		if len(path) > maxLoggedPath {
			path = path[:maxLoggedPath]
		}
		level.Info(logger).Log("msg", "request", "method", r.Method, "path", path, "status", m.Code,
			"duration_ms", float64(m.Duration)/float64(time.Millisecond))
	})
}

// routeLabel is OpenTelemetry's http.route: the path of the ServeMux pattern that matched
// (Request.Pattern, set by the mux on the request it was handed), without its method. A pattern
// ending in "/" matches a whole subtree of paths, none of them listed: no route, like a request
// answered before the mux (Pattern empty).
func routeLabel(pattern string) string {
	if _, path, hasMethod := strings.Cut(pattern, " "); hasMethod {
		pattern = path
	}
	if strings.HasSuffix(pattern, "/") {
		return ""
	}
	return pattern
}

// methodLabel is the method as OpenTelemetry labels it: RFC 9110's methods and PATCH, else _OTHER.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch:
		return method
	}
	return "_OTHER"
}

// Tracing is OpenTelemetry tracing, on when OTEL_TRACES_EXPORTER=otlp (Config.TracingOn). A nil
// *Tracing is tracing off: its methods then install nothing, so the service is the untraced one
// (no SDK, no otelhttp, no traceparent read or sent). Nothing here is set globally but the
// error handler: the tracer provider and the propagator are handed to otelhttp and to the
// Elasticsearch client explicitly.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
}

// NewTracing is the OpenTelemetry SDK configured by its own environment variables: the OTLP
// exporter over HTTP/protobuf (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// default http://localhost:4318, and the exporter's other OTEL_EXPORTER_OTLP_* settings), the
// batch span processor (OTEL_BSP_*), the sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG,
// default parentbased_always_on) and the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
// The SDK's own diagnostics (a failed export) become warn lines of the JSON log.
//
// One correction: with neither endpoint variable set, the Go exporter sends to
// https://localhost:4318, where the OpenTelemetry specification's default is
// http://localhost:4318. WithInsecure makes it the specification's; any endpoint variable
// (its scheme decides http or https) is left to the exporter.
func NewTracing(ctx context.Context, logger log.Logger) (*Tracing, error) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		level.Warn(logger).Log("msg", "OpenTelemetry", "error", err)
	}))
	var options []otlptracehttp.Option
	_, endpoint := os.LookupEnv("OTEL_EXPORTER_OTLP_ENDPOINT")
	_, tracesEndpoint := os.LookupEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if !endpoint && !tracesEndpoint {
		options = append(options, otlptracehttp.WithInsecure())
	}
	exporter, err := otlptracehttp.New(ctx, options...)
	if err != nil {
		return nil, err
	}
	return newTracing(sdktrace.WithBatcher(exporter)), nil
}

// newTracing: the tracer provider with processor (the batcher, or a test's syncer), W3C trace
// context and baggage as OTEL_PROPAGATORS's default says.
func newTracing(processor sdktrace.TracerProviderOption) *Tracing {
	return &Tracing{
		provider:   sdktrace.NewTracerProvider(processor),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// Shutdown ends the tracer provider: the spans already ended are exported first, within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Handler is otelhttp's server middleware, outermost: one SERVER span per request, a child of
// the caller's traceparent, with the stable HTTP attributes. otelhttp names the span again after
// the mux has set Request.Pattern; spanName makes that name the contract's (the route only for a
// listed path, never the "/" catch-all). otelhttp sets http.route only from a Pattern known
// before it starts the span, which the mux sets later: tagRoute adds it afterwards.
func (t *Tracing) Handler(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return otelhttp.NewHandler(tagRoute(next), "",
		otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(noopmetric.NewMeterProvider()), // traces only: /metrics stays Prometheus's
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return spanName(r) }),
	)
}

// spanName is "<method> <route>", the bare method where no listed path matched; a method
// OpenTelemetry does not know (methodLabel's _OTHER) is "HTTP", as the semantic conventions say.
func spanName(r *http.Request) string {
	method := methodLabel(r.Method)
	if method == "_OTHER" {
		method = "HTTP"
	}
	if route := routeLabel(r.Pattern); route != "" {
		return method + " " + route
	}
	return method
}

// tagRoute sets http.route on the request's span once the mux has matched a listed path, and
// http.request.method to _OTHER for a method that is not exactly a known one (otelhttp reads
// "get" as GET; methods are case-sensitive, and the metrics label says _OTHER).
func tagRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		span := trace.SpanFromContext(r.Context())
		if route := routeLabel(r.Pattern); route != "" {
			span.SetAttributes(semconv.HTTPRoute(route))
		}
		if methodLabel(r.Method) == "_OTHER" {
			span.SetAttributes(semconv.HTTPRequestMethodOther)
		}
	})
}

// Elasticsearch is go-elasticsearch's own OpenTelemetry instrumentation (one CLIENT span per
// request, with http.request.method), made to send the W3C traceparent too, which it does not:
// nil (no instrumentation) when tracing is off.
func (t *Tracing) Elasticsearch() esapi.Instrumentation {
	if t == nil {
		return nil
	}
	return propagating{elasticsearch.NewOpenTelemetryInstrumentation(t.provider, false), t.propagator}
}

// propagating is an Elasticsearch instrumentation that also injects the request's trace context
// into its headers. The client calls BeforeRequest with the request it is about to send, whose
// context holds the CLIENT span the instrumentation started: that span is the traceparent's parent.
type propagating struct {
	esapi.Instrumentation
	propagator propagation.TextMapPropagator
}

func (p propagating) BeforeRequest(req *http.Request, endpoint string) {
	p.Instrumentation.BeforeRequest(req, endpoint)
	p.propagator.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
}
