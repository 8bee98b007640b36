package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

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
// (decoder → endpoint → encoder, errors through encodeError), behind a router that matches
// the raw path exactly. net/http's ServeMux is not used: it cleans paths ("//", "/./") and
// redirects ("/city/v1/get/" → 301), where the contract wants a 404.
func NewHTTPHandler(endpoints Endpoints, logger log.Logger) http.Handler {
	options := []httptransport.ServerOption{
		httptransport.ServerErrorEncoder(encodeError),
		httptransport.ServerErrorHandler(transport.NewLogErrorHandler(level.Debug(logger))),
	}
	return router{
		routeCity:    httptransport.NewServer(endpoints.GetCity, decodeGetCityRequest, encodeJSONResponse, options...),
		routeHealth:  httptransport.NewServer(endpoints.Health, httptransport.NopRequestDecoder, encodeJSONResponse, options...),
		routeAPIDocs: httptransport.NewServer(endpoints.APIDocs, httptransport.NopRequestDecoder, encodeRawResponse, options...),
		routeMetrics: httptransport.NewServer(endpoints.Metrics, httptransport.NopRequestDecoder, encodeRawResponse, options...),
	}
}

// router: a request target over 8192 bytes is 414 before anything else; a listed path takes
// GET and HEAD (net/http drops the body of a HEAD answer and keeps its headers), any other
// method is 405; any other path is 404, whatever the method.
type router map[string]http.Handler

func (rt router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if len(r.RequestURI) > maxRequestTarget {
		encodeError(ctx, errURITooLong, w)
		return
	}
	handler, listed := rt[rawPath(r)]
	switch {
	case !listed:
		encodeError(ctx, errNoSuchResource, w)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		encodeError(ctx, errMethodNotAllowed, w)
	default:
		handler.ServeHTTP(w, r)
	}
}

// rawPath is the path as sent on the request line, not decoded (r.URL.Path would turn
// "/h%65alth" into "/health").
func rawPath(r *http.Request) string {
	if strings.HasPrefix(r.RequestURI, "/") {
		path, _, _ := strings.Cut(r.RequestURI, "?")
		return path
	}
	return r.URL.EscapedPath() // absolute-form ("GET http://host/path") or "*"
}

// routeOf is the http_route metric label: the listed path the request matched, else "".
func routeOf(r *http.Request) string {
	switch path := rawPath(r); path {
	case routeCity, routeHealth, routeAPIDocs, routeMetrics:
		return path
	}
	return ""
}

// decodeGetCityRequest parses the raw query (see parseCityQuery); problems are a 400.
func decodeGetCityRequest(_ context.Context, r *http.Request) (interface{}, error) {
	return parseCityQuery(r.URL.RawQuery)
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

// encodeError is the error encoder of every server and of the router: an *AppError's status,
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
