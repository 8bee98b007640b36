package main

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/kit/metrics"
	kitprometheus "github.com/go-kit/kit/metrics/prometheus"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// NewLogger is go-kit's JSON logger: one object per line with ts (RFC 3339, UTC, milliseconds),
// level (added by level.Info etc., lower case) and msg, plus the line's fields. Lines are
// written whole (SyncWriter), so concurrent requests never interleave.
func NewLogger(w io.Writer) log.Logger {
	logger := log.NewJSONLogger(log.NewSyncWriter(w))
	return log.With(logger, "ts", log.TimestampFormat(func() time.Time { return time.Now().UTC() },
		"2006-01-02T15:04:05.000Z07:00"))
}

// describe is a failure as a log line carries it in `error` (the spec's Logging rule): err's text,
// then the text of each error in its chain (errors.Unwrap) that the text so far does not already
// contain, joined by ": ". An error wrapped with fmt.Errorf's %w is already in its wrapper's text,
// so this is most often err.Error() alone. (errors.Unwrap stops at a multi-error, errors.Join or
// several %w, whose text is its parts' texts.)
func describe(err error) string {
	text := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		if causeText := cause.Error(); !strings.Contains(text, causeText) {
			text += ": " + causeText
		}
	}
	return text
}

// levelFilter keeps the lines at logLevel (a valid LOG_LEVEL) and above.
func levelFilter(logLevel string) level.Option {
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
// 404, 405, 414), is observed in the histogram and logged once at info.
func Instrument(next http.Handler, logger log.Logger, duration metrics.Histogram) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		recorder := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(recorder, r)
		elapsed := time.Since(start)
		status := recorder.statusCode()
		duration.With(
			"http_request_method", methodLabel(r.Method),
			"http_route", routeLabel(r.Pattern),
			"http_response_status_code", strconv.Itoa(status),
		).Observe(elapsed.Seconds())
		path := r.RequestURI
		if len(path) > maxLoggedPath {
			path = path[:maxLoggedPath]
		}
		level.Info(logger).Log("msg", "request", "method", r.Method, "path", path, "status", status,
			"duration_ms", float64(elapsed)/float64(time.Millisecond))
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

// statusRecorder remembers the status a handler sent.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) statusCode() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
