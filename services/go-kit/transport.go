package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	stdlog "log"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/go-kit/kit/transport"
	httptransport "github.com/go-kit/kit/transport/http"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// The contract's paths. They match exactly and are their own route templates.
const (
	routeCity    = "/city/v1/get"
	routeHealth  = "/health"
	routeAPIDocs = "/api-docs"
	routeMetrics = "/metrics"
)

// maxRequestTarget is the longest request target (path and query, as sent) answered normally.
const maxRequestTarget = 8192

// NewHTTPHandler puts the endpoints on HTTP: one go-kit httptransport.Server per listed path
// (decoder → endpoint → encoder, errors through encodeError), mounted on net/http's ServeMux
// with Go 1.22 method patterns, as go-kit's addsvc example mounts its servers on a ServeMux.
// ServeMux's own 404 and 405 are plain text, so each listed path also has a catch-all pattern
// (any other method: 405) and "/" takes every other path (404), both through encodeError.
// In front of the mux: the contract's checks that come before routing.
func NewHTTPHandler(endpoints Endpoints, logger log.Logger) http.Handler {
	options := []httptransport.ServerOption{
		httptransport.ServerErrorEncoder(encodeError),
		httptransport.ServerErrorHandler(transport.NewLogErrorHandler(level.Debug(logger))),
	}
	mux := http.NewServeMux()
	for route, server := range map[string]http.Handler{
		routeCity:    httptransport.NewServer(endpoints.GetCity, decodeGetCityRequest, encodeGetCityResponse, options...),
		routeHealth:  httptransport.NewServer(endpoints.Health, httptransport.NopRequestDecoder, encodeJSONResponse, options...),
		routeAPIDocs: httptransport.NewServer(endpoints.APIDocs, httptransport.NopRequestDecoder, encodeRawResponse, options...),
		routeMetrics: httptransport.NewServer(endpoints.Metrics, httptransport.NopRequestDecoder, encodeRawResponse, options...),
	} {
		mux.Handle("GET "+route, server)                     // a GET pattern matches HEAD too
		mux.Handle(route, errorHandler(errMethodNotAllowed)) // every other method, also "get" and "FOO"
	}
	mux.Handle("/", errorHandler(errNoSuchResource)) // every other path, whatever the method
	return closeHTTP10(limitTarget(exactPaths(mux)))
}

// NewHTTPServer is net/http's server for handler; only the settings below differ from its
// defaults.
func NewHTTPServer(handler http.Handler, logger log.Logger) *http.Server {
	return &http.Server{
		Handler: handler,
		// The request line and header section together may take 65536 bytes (net/http adds 4096
		// of slack); past that net/http answers 431 itself and closes. The default is 1 MiB.
		MaxHeaderBytes: 65536,
		// "OPTIONS *" reaches the handler (a JSON 404) instead of getting net/http's own 200.
		DisableGeneralOptionsHandler: true,
		// A request head must arrive within 10 s; by default a client sending it a byte at a
		// time holds a connection and its goroutine for as long as it likes.
		ReadHeaderTimeout: 10 * time.Second,
		// A kept-alive connection waits at most 60 s for its next request (by default, with no
		// ReadTimeout, for ever).
		IdleTimeout: 60 * time.Second,
		// net/http's own messages (a panic, a TLS handshake error) as JSON lines.
		ErrorLog: stdlog.New(log.NewStdlibAdapter(level.Error(logger)), "", 0),
	}
}

// errorHandler answers every request with err, through the servers' error encoder.
func errorHandler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encodeError(r.Context(), err, w)
	})
}

// limitTarget: a request target (r.RequestURI: path and query as sent) over 8192 bytes is 414,
// before anything else.
func limitTarget(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.RequestURI) > maxRequestTarget {
			encodeError(r.Context(), errURITooLong, w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// exactPaths: ServeMux matches the path cleaned and percent-decoded (it redirects "//x", "/./x"
// and "/a/../x" to the clean path, and "/h%65alth" matches "GET /health"), while the contract
// matches the path exactly as sent. No listed path has an escape or an empty or dot segment, so
// a path with one is unknown: 404 before the mux sees it. So is a target that is no path at all
// ("OPTIONS *", which net/http answers itself unless DisableGeneralOptionsHandler).
func exactPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath() // what ServeMux matches
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "%") || cleanPath(p) != p {
			encodeError(r.Context(), errNoSuchResource, w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is the path ServeMux would redirect to: path.Clean, keeping a trailing slash.
func cleanPath(p string) string {
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// closeHTTP10 closes the connection after the answer wherever net/http's framing of the request
// is not RFC 9112's, with "Connection: close" on the answer (net/http then closes the connection
// once it is sent):
//   - every HTTP/1.0 request: net/http ignores Transfer-Encoding on HTTP/1.0
//     (transferReader.parseTransferEncoding in net/http/transfer.go), so a chunked body counts as
//     no body, and on a connection the client keeps alive ("Connection: keep-alive") net/http would
//     read that body as the next request;
//   - every request with a Transfer-Encoding: with a Content-Length beside it, RFC 9112 section 6.1
//     says the server MUST close after answering, and Go 1.26 keeps the connection open
//     (golang/go#80942, fixed upstream by commit b2b97b94965f, not in Go 1.26.8). net/http deletes
//     the Content-Length before a handler runs (fixLength), so a handler cannot tell the two apart:
//     every chunked request closes its connection. No route takes a body.
func closeHTTP10(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.ProtoAtLeast(1, 1) || len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// decodeGetCityRequest parses the raw query (see parseCityQuery); problems are a 400.
func decodeGetCityRequest(_ context.Context, r *http.Request) (interface{}, error) {
	return parseCityQuery(r.URL.RawQuery)
}

// encodeGetCityResponse answers a failed response (endpoint.Failer) through the error encoder, as
// go-kit's addsvc encodes its responses (examples/addsvc/pkg/addtransport/http.go,
// encodeHTTPGenericResponse), else the city as a 200.
func encodeGetCityResponse(ctx context.Context, w http.ResponseWriter, response interface{}) error {
	if f, ok := response.(endpoint.Failer); ok && f.Failed() != nil {
		encodeError(ctx, f.Failed(), w)
		return nil
	}
	return encodeJSONResponse(ctx, w, response.(getCityResponse).City)
}

// encodeJSONResponse writes a generated model as a 200.
func encodeJSONResponse(_ context.Context, w http.ResponseWriter, response interface{}) error {
	body, err := marshalJSON(response)
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, "application/json", body)
	return nil
}

func encodeRawResponse(_ context.Context, w http.ResponseWriter, response interface{}) error {
	raw := response.(rawResponse)
	writeBody(w, http.StatusOK, raw.ContentType, raw.Body)
	return nil
}

// encodeError is the error encoder of every server, of the mux's catch-alls and of the checks
// in front of it: an *AppError's status,
// headers (Allow for 405) and {"message":...}. Any other error (none is expected) is a 500.
func encodeError(_ context.Context, err error, w http.ResponseWriter) {
	var appErr *AppError
	if !errors.As(err, &appErr) {
		appErr = &AppError{http.StatusInternalServerError, "Internal Server Error: unexpected error."}
	}
	for name, values := range appErr.Headers() {
		w.Header()[name] = values
	}
	body, _ := marshalJSON(appErr.Body()) // a struct with one string: cannot fail
	writeBody(w, appErr.StatusCode(), "application/json", body)
}

// writeBody sends the status, an exact Content-Type and Content-Length (set here because
// net/http computes none for HEAD), then the body. A HEAD's body is discarded by net/http
// (http.ErrBodyNotAllowed); any other write error means the client has gone: nothing to do.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// marshalJSON renders the contract's wire format: compact, no trailing newline, keys in struct
// (= schema) order, <, > and & literal (json.Marshal would write \u003c…), and every
// non-ASCII character literal.
func marshalJSON(v interface{}) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return literalLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// literalLineSeparators undoes the one escape encoding/json makes even with SetEscapeHTML(false):
// U+2028 and U+2029 as \u2028 and \u2029. Every backslash in encoder output starts an escape,
// so escapes are skipped pairwise and an escaped backslash followed by "u2028" stays intact.
func literalLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] != '\\':
			out = append(out, b[i])
		case bytes.HasPrefix(b[i:], []byte(`\u2028`)):
			out = append(out, "\u2028"...)
			i += 5
		case bytes.HasPrefix(b[i:], []byte(`\u2029`)):
			out = append(out, "\u2029"...)
			i += 5
		default:
			out = append(out, b[i], b[i+1])
			i++
		}
	}
	return out
}
