package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	notFoundBody   = `{"message":"Not Found: no such resource."}`
	notAllowedBody = `{"message":"Method Not Allowed: use GET."}`
	tooLongBody    = `{"message":"URI Too Long: request target exceeds 8192 bytes."}`
	pragueEN       = `{"countryIso":"CZ","id":1,"isFeatured":true,"name":"Prague","regionName":"Prague"}`
)

// testServer is the service as main builds it, on a fake lookup, over a real socket (so
// that targets reach net/http byte for byte and HEAD bodies are dropped as in production).
func testServer(t *testing.T, logs io.Writer) *httptest.Server {
	t.Helper()
	lookup := fakeLookup{
		cities:  map[int64]string{1: `{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":1,"name.en":"Prague"}`},
		regions: map[int64]string{1: `{"name.en":"Prague"}`},
	}
	registry := prometheus.NewRegistry()
	logger := NewLogger(logs)
	endpoints := MakeEndpoints(NewCityService(lookup), apiDocs, registry)
	server := httptest.NewUnstartedServer(nil)
	server.Config = NewHTTPServer(Instrument(NewHTTPHandler(endpoints, logger), logger, NewRequestDuration(registry)), logger)
	server.Start()
	t.Cleanup(server.Close)
	return server
}

type answer struct {
	status  int
	headers http.Header
	body    string
}

// send writes one raw request (the target exactly as given) and reads the answer.
func send(t *testing.T, server *httptest.Server, method, target string) answer {
	t.Helper()
	conn, err := net.Dial("tcp", server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", method, target)
	reader := bufio.NewReader(conn)
	res, err := http.ReadResponse(reader, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, target, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	// Wait until the server closes the connection: then the handler, and with it the request's
	// log line and observation, has finished.
	_, _ = io.Copy(io.Discard, reader)
	return answer{res.StatusCode, res.Header, string(body)}
}

func TestListedPaths(t *testing.T) {
	server := testServer(t, io.Discard)
	tests := []struct {
		target, contentType, body string
	}{
		{"/city/v1/get?id=1&language=en", "application/json", pragueEN},
		{"/health", "application/json", `{"status":"UP"}`},
		{"/health?id=1&id=2&x", "application/json", `{"status":"UP"}`},
		{"/api-docs", "application/json", string(apiDocs)},
	}
	for _, tt := range tests {
		got := send(t, server, "GET", tt.target)
		if got.status != 200 || got.headers.Get("Content-Type") != tt.contentType || got.body != tt.body {
			t.Errorf("GET %s: %d %q %.100q", tt.target, got.status, got.headers.Get("Content-Type"), got.body)
		}
	}
	metrics := send(t, server, "GET", "/metrics")
	if metrics.status != 200 || metrics.headers.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("GET /metrics: %d %q", metrics.status, metrics.headers.Get("Content-Type"))
	}
}

func TestUnknownPathsAreJSON404ForAnyMethod(t *testing.T) {
	server := testServer(t, io.Discard)
	for _, method := range []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "FOO"} {
		for _, target := range []string{
			"/", "/nope", "/nope?id=1&language=en", "/health/", "/Health", "/HEALTH", "/city/v1/get/",
			"/city/v1/get/?id=1&language=en", "/City/v1/get", "/city/v1/GET", "/city/v1/./get",
			"/city/v1/x/../get", "/city/v1//get", "//city/v1/get", "/city/v1/get;x=1", "/city/v1",
			"/city/v1/get/1", "/h%65alth", "/api-docs/", "/api-docs.json", "/metrics/",
		} {
			got := send(t, server, method, target)
			if got.status != 404 || got.headers.Get("Content-Type") != "application/json" ||
				got.body != notFoundBody || got.headers.Get("Location") != "" {
				t.Errorf("%s %s: %d %v %q", method, target, got.status, got.headers, got.body)
			}
		}
	}
	// "OPTIONS *" would be answered by net/http itself unless DisableGeneralOptionsHandler.
	if got := send(t, server, "OPTIONS", "*"); got.status != 404 || got.body != notFoundBody {
		t.Errorf("OPTIONS *: %d %q", got.status, got.body)
	}
}

func TestOtherMethodsOnListedPathsAre405(t *testing.T) {
	server := testServer(t, io.Discard)
	for _, path := range []string{routeCity, routeHealth, routeAPIDocs, routeMetrics} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "get", "FOO"} {
			got := send(t, server, method, path+"?id=0&id=x") // the method is checked before the parameters
			if got.status != 405 || got.headers.Get("Allow") != "GET, HEAD" ||
				got.headers.Get("Content-Type") != "application/json" || got.body != notAllowedBody {
				t.Errorf("%s %s: %d %v %q", method, path, got.status, got.headers, got.body)
			}
		}
	}
}

func TestHeadIsGetWithoutTheBody(t *testing.T) {
	server := testServer(t, io.Discard)
	for _, target := range []string{
		"/city/v1/get?id=1&language=en", "/city/v1/get?id=0", "/city/v1/get?id=7&language=en",
		"/health", "/api-docs", "/metrics", "/nope",
	} {
		get, head := send(t, server, "GET", target), send(t, server, "HEAD", target)
		if head.body != "" || head.status != get.status ||
			head.headers.Get("Content-Type") != get.headers.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %v %q; GET: %d %v", target, head.status, head.headers, head.body, get.status, get.headers)
		}
		length := head.headers.Get("Content-Length")
		if target != "/metrics" && length != strconv.Itoa(len(get.body)) { // /metrics changes in between
			t.Errorf("HEAD %s: Content-Length %q, GET body %d bytes", target, length, len(get.body))
		}
		if length == "" {
			t.Errorf("HEAD %s: no Content-Length", target)
		}
	}
}

func TestLongRequestTargetsAre414BeforeAnythingElse(t *testing.T) {
	server := testServer(t, io.Discard)
	pad := func(prefix string, length int) string { return prefix + strings.Repeat("a", length-len(prefix)) }
	if got := send(t, server, "GET", pad("/city/v1/get?id=1&language=en&pad=", 8192)); got.status != 200 || got.body != pragueEN {
		t.Errorf("8192 bytes: %d %q", got.status, got.body)
	}
	if got := send(t, server, "GET", pad("/nope?pad=", 8192)); got.status != 404 {
		t.Errorf("8192 bytes, unknown path: %d", got.status)
	}
	for _, tt := range []struct {
		method, target string
	}{
		{"GET", pad("/city/v1/get?id=1&language=en&pad=", 8193)},
		{"GET", pad("/city/v1/get?id=1&language=en&pad=", 32*1024)},
		{"GET", pad("/health?pad=", 64*1024)}, // within MaxHeaderBytes (65536) and net/http's 4096 bytes of slack
		{"GET", pad("/nope?pad=", 8193)},
		{"GET", pad("/", 8193)},
		{"GET", pad("/city/v1/get?id=0&id=x&pad=", 8193)},
		{"POST", pad("/city/v1/get?id=1&language=en&pad=", 8193)},
		{"HEAD", pad("/health?pad=", 8193)},
	} {
		got := send(t, server, tt.method, tt.target)
		want := tooLongBody
		if tt.method == "HEAD" {
			want = ""
		}
		if got.status != 414 || got.headers.Get("Content-Type") != "application/json" || got.body != want ||
			got.headers.Get("Content-Length") != strconv.Itoa(len(tooLongBody)) {
			t.Errorf("%s %d bytes: %d %v %q", tt.method, len(tt.target), got.status, got.headers, got.body)
		}
	}
}

// exchange writes raw bytes on one connection and returns everything the server sends until it
// closes the connection (or 5 s pass).
func exchange(t *testing.T, server *httptest.Server, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("%.60q: %v after %q", raw, err, got)
	}
	return string(got)
}

// A head over MaxHeaderBytes (+ net/http's 4096 bytes of slack) is net/http's own plain-text
// 431, and the connection is closed.
func TestHeadsOverTheLimitAreNetHTTPs431(t *testing.T) {
	server := testServer(t, io.Discard)
	for _, raw := range []string{
		"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 70*1024) + "\r\n\r\n",
		"GET /health?pad=" + strings.Repeat("p", 70*1024) + " HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		if got := exchange(t, server, raw); !strings.HasPrefix(got, "HTTP/1.1 431 Request Header Fields Too Large\r\n") {
			t.Errorf("%d bytes: %.200q", len(raw), got)
		}
	}
}

// net/http ignores Transfer-Encoding on HTTP/1.0, so a chunked body on a kept-alive HTTP/1.0
// connection would be read as the next request: every HTTP/1.0 connection is closed after its
// answer instead, and what follows is never answered.
func TestHTTP10ConnectionsCloseAfterTheirAnswer(t *testing.T) {
	server := testServer(t, io.Discard)
	smuggled := "GET /smuggled HTTP/1.0\r\n\r\n"
	for _, raw := range []string{
		"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /health HTTP/1.0\r\n\r\n",
		"GET /health HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled),
	} {
		got := exchange(t, server, raw)
		if strings.Count(got, "HTTP/1.") != 1 || !strings.HasPrefix(got, "HTTP/1.0 200 OK\r\n") ||
			!strings.Contains(got, "\r\nConnection: close\r\n") || !strings.HasSuffix(got, `{"status":"UP"}`) {
			t.Errorf("%.80q: %q", raw, got)
		}
	}
}

// A request with both Transfer-Encoding and Content-Length is framed by its chunks, and the
// connection is closed after the answer (RFC 9112 section 6.1), so the bytes the Content-Length
// covers beyond the last chunk are never read as a request.
func TestTransferEncodingWithContentLengthClosesTheConnection(t *testing.T) {
	server := testServer(t, io.Discard)
	body := "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, head := range []string{
		"Transfer-Encoding: chunked\r\nContent-Length: " + fmt.Sprint(len(body)),
		"Content-Length: " + fmt.Sprint(len(body)) + "\r\nTransfer-Encoding: chunked",
	} {
		raw := "GET /health HTTP/1.1\r\nHost: x\r\n" + head + "\r\n\r\n" + body
		got := exchange(t, server, raw)
		if strings.Count(got, "HTTP/1.") != 1 || !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") ||
			!strings.Contains(got, "\r\nConnection: close\r\n") {
			t.Errorf("%.80q: %q", raw, got)
		}
	}
}

func TestRequestsAreCountedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	server := testServer(t, &logs)
	send(t, server, "GET", "/health")
	send(t, server, "PUT", "/health")
	send(t, server, "FOO", "/city/v1/get")
	send(t, server, "PATCH", "/city/v1/get")
	send(t, server, "GET", "/no/such/path")
	send(t, server, "HEAD", "/city/v1/get?id=1&language=en")
	metrics := send(t, server, "GET", "/metrics").body
	for _, labels := range []string{
		`http_request_method="GET",http_response_status_code="200",http_route="/health"`,
		`http_request_method="PUT",http_response_status_code="405",http_route="/health"`,
		`http_request_method="_OTHER",http_response_status_code="405",http_route="/city/v1/get"`,
		`http_request_method="PATCH",http_response_status_code="405",http_route="/city/v1/get"`,
		`http_request_method="GET",http_response_status_code="404",http_route=""`,
		`http_request_method="HEAD",http_response_status_code="200",http_route="/city/v1/get"`,
	} {
		if !strings.Contains(metrics, "http_server_request_duration_seconds_count{"+labels+"} 1\n") {
			t.Errorf("no count 1 for {%s} in\n%s", labels, metrics)
		}
	}
	// The scrape itself is counted: the next scrape shows it.
	if !strings.Contains(send(t, server, "GET", "/metrics").body,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/metrics"} 1`) {
		t.Error("GET /metrics not counted")
	}
	for _, le := range []string{"0.005", "0.01", "0.025", "0.05", "0.075", "0.1", "0.25", "0.5", "0.75", "1", "2.5", "5", "7.5", "10", "+Inf"} {
		if !strings.Contains(metrics, `http_route="/health",le="`+le+`"}`) {
			t.Errorf("no bucket le=%s", le)
		}
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d log lines, want 8 (one per request):\n%s", len(lines), logs.String())
	}
	want := `"method":"FOO","msg":"request","path":"/city/v1/get","status":405,"ts":"`
	if !strings.Contains(lines[2], want) || !strings.HasPrefix(lines[2], `{"duration_ms":`) ||
		!strings.Contains(lines[2], `"level":"info"`) {
		t.Errorf("log line %s, want it to contain %s", lines[2], want)
	}
}

func TestLoggedPathOfA414IsCut(t *testing.T) {
	var logs bytes.Buffer
	server := testServer(t, &logs)
	target := "/health?pad=" + strings.Repeat("p", 20000)
	send(t, server, "GET", target)
	if !strings.Contains(logs.String(), `"path":"`+target[:8192]+`"`) || strings.Contains(logs.String(), target[:8193]) {
		t.Errorf("the logged path is not the first 8192 bytes of the target")
	}
}

func TestLogLines(t *testing.T) {
	var logs bytes.Buffer
	logger := NewLogger(&logs)
	_ = level.Info(logger).Log("msg", `a "quoted" <Plzeň> & more`, "port", 8082, "duration_ms", 1.25)
	line := logs.String()
	if !strings.HasSuffix(line, "}\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("not one line: %q", line)
	}
	for _, want := range []string{`"level":"info"`, `"msg":"a \"quoted\" <Plzeň> & more"`, `"port":8082`, `"duration_ms":1.25`} {
		if !strings.Contains(line, want) {
			t.Errorf("%s: no %s", line, want)
		}
	}
	ts := line[strings.Index(line, `"ts":"`)+6:]
	ts = ts[:strings.IndexByte(ts, '"')]
	if len(ts) != len("2006-01-02T15:04:05.000Z") || ts[10] != 'T' || !strings.HasSuffix(ts, "Z") {
		t.Errorf("ts %q is not RFC 3339 UTC with milliseconds", ts)
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		in   interface{}
		want string
	}{
		{(&AppError{400, "x"}).Body(), `{"message":"x"}`},
		{struct{ A string }{"<Plzeň> & \"Brno\" \\ \u2028\u2029 \\u2028"}, "{\"A\":\"<Plzeň> & \\\"Brno\\\" \\\\ \u2028\u2029 \\\\u2028\"}"},
		{struct{ A string }{"\x01\n"}, `{"A":"\u0001\n"}`},
	}
	for _, tt := range tests {
		got, err := marshalJSON(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("marshalJSON(%#v) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// The embedded copy is spec/openapi.json (when the repository is around it): `make generate`
// after `make spec`.
func TestAPIDocsIsTheSpec(t *testing.T) {
	spec, err := os.ReadFile("../../spec/openapi.json")
	if err != nil {
		t.Skipf("spec not found: %v", err)
	}
	if !bytes.Equal(spec, apiDocs) {
		t.Error("generated/openapi.json differs from spec/openapi.json: run make generate")
	}
}

func TestAllowsOnlyOnA405(t *testing.T) {
	if (&AppError{404, ""}).Headers() != nil || errMethodNotAllowed.Headers().Get("Allow") != "GET, HEAD" {
		t.Error("Allow header")
	}
}
