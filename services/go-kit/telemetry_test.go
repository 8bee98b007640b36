package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracedService is the service as main builds it with tracing on (spans kept in memory, exported
// as each ends) or off (tracing nil), over a real socket, with Elasticsearch faked by a server
// that answers city 1 and region 1 and records the traceparent of every request it gets.
type tracedService struct {
	server       *httptest.Server
	spans        *tracetest.InMemoryExporter
	traceparents chan string // one per Elasticsearch request ("" for none)
}

func newTracedService(t *testing.T, on bool) tracedService {
	t.Helper()
	s := tracedService{spans: tracetest.NewInMemoryExporter(), traceparents: make(chan string, 16)}
	var tracing *Tracing
	if on {
		tracing = newTracing(sdktrace.WithSyncer(s.spans))
		t.Cleanup(func() { _ = tracing.Shutdown(context.Background()) })
	}
	documents := map[string]string{
		"/city/_doc/1":   `{"found":true,"_source":{"id":1,"countryIso":"CZ","isFeatured":true,"regionId":1,"name.en":"Prague"}}`,
		"/region/_doc/1": `{"found":true,"_source":{"name.en":"Prague"}}`,
	}
	elasticsearch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.traceparents <- r.Header.Get("Traceparent")
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		if doc, ok := documents[r.URL.Path]; ok {
			_, _ = w.Write([]byte(doc))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"found":false}`))
	}))
	t.Cleanup(elasticsearch.Close)
	u, _ := url.Parse(elasticsearch.URL)
	logger := log.NewNopLogger()
	repository, err := NewCityRepository(u, time.Second, logger, tracing.Elasticsearch())
	if err != nil {
		t.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	endpoints := MakeEndpoints(NewCityService(repository), apiDocs, registry)
	handler := tracing.Handler(Instrument(NewHTTPHandler(endpoints, logger), logger, NewRequestDuration(registry)))
	s.server = httptest.NewUnstartedServer(nil)
	s.server.Config = NewHTTPServer(handler, logger)
	s.server.Start()
	t.Cleanup(s.server.Close)
	return s
}

// send is one raw request with extra header lines; it returns once the server has closed the
// connection, so the request's span has ended.
func (s tracedService) send(t *testing.T, method, target, headers string) (status int, header http.Header) {
	t.Helper()
	conn, err := net.Dial("tcp", s.server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n%s\r\n", method, target, headers)
	reader := bufio.NewReader(conn)
	res, err := http.ReadResponse(reader, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_, _ = io.Copy(io.Discard, reader)
	return res.StatusCode, res.Header
}

// traceparentsSent drains the traceparents Elasticsearch got so far.
func (s tracedService) traceparentsSent() []string {
	var sent []string
	for {
		select {
		case tp := <-s.traceparents:
			sent = append(sent, tp)
		default:
			return sent
		}
	}
}

func attributes(span tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range span.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

const callerTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// One SERVER span per request, the caller's child, named and attributed as the spec says; one
// CLIENT span per Elasticsearch request, the server span's child; each Elasticsearch request
// carries a traceparent of the same trace whose parent is that request's CLIENT span.
func TestTracingServerAndElasticsearchSpans(t *testing.T) {
	s := newTracedService(t, true)
	status, header := s.send(t, "GET", "/city/v1/get?id=1&language=en", "Traceparent: "+callerTraceparent+"\r\n")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if header.Get("Traceparent") != "" {
		t.Error("the answer carries a traceparent")
	}
	var server tracetest.SpanStub
	var clients []tracetest.SpanStub
	for _, span := range s.spans.GetSpans() {
		switch span.SpanKind {
		case trace.SpanKindServer:
			server = span
		case trace.SpanKindClient:
			clients = append(clients, span)
		default:
			t.Errorf("unexpected span %q of kind %v", span.Name, span.SpanKind)
		}
	}
	if server.Name != "GET /city/v1/get" {
		t.Fatalf("server span %q, spans %v", server.Name, s.spans.GetSpans())
	}
	if got := server.SpanContext.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("server span's trace %s, want the caller's", got)
	}
	if got := server.Parent.SpanID().String(); got != "00f067aa0ba902b7" || !server.Parent.IsRemote() {
		t.Errorf("server span's parent %s, want the caller's span", got)
	}
	attrs := attributes(server)
	if attrs["http.request.method"].AsString() != "GET" || attrs["http.response.status_code"].AsInt64() != 200 ||
		attrs["http.route"].AsString() != "/city/v1/get" {
		t.Errorf("server span attributes %v", server.Attributes)
	}

	sent := s.traceparentsSent()
	if len(clients) != 2 || len(sent) != 2 { // the city, then its region
		t.Fatalf("%d CLIENT spans for %d Elasticsearch requests, want 2 and 2", len(clients), len(sent))
	}
	for i, client := range clients {
		if client.Parent.SpanID() != server.SpanContext.SpanID() || client.SpanContext.TraceID() != server.SpanContext.TraceID() {
			t.Errorf("CLIENT span %q is not the server span's child", client.Name)
		}
		if got := attributes(client)["http.request.method"].AsString(); got != "GET" {
			t.Errorf("CLIENT span %q: http.request.method %q", client.Name, got)
		}
		want := "00-" + client.SpanContext.TraceID().String() + "-" + client.SpanContext.SpanID().String() + "-01"
		if sent[i] != want {
			t.Errorf("Elasticsearch request %d: traceparent %q, want %q (its CLIENT span)", i, sent[i], want)
		}
	}
}

// The span name and http.route follow the listed paths; requests answered before the mux (414,
// an unclean path) or by its "/" catch-all have no route. A method that is not exactly a known one
// is named HTTP and recorded as _OTHER.
func TestTracingSpanNamesAndRoutes(t *testing.T) {
	s := newTracedService(t, true)
	for _, tt := range []struct {
		method, target, name, route, attrMethod string
		status                                  int
	}{
		{"GET", "/health", "GET /health", "/health", "GET", 200},
		{"HEAD", "/health", "HEAD /health", "/health", "HEAD", 200},
		{"GET", "/metrics", "GET /metrics", "/metrics", "GET", 200},
		{"GET", "/api-docs", "GET /api-docs", "/api-docs", "GET", 200},
		{"GET", "/city/v1/get?id=2&language=en", "GET /city/v1/get", "/city/v1/get", "GET", 404},
		{"GET", "/city/v1/get?id=x", "GET /city/v1/get", "/city/v1/get", "GET", 400},
		{"POST", "/city/v1/get", "POST /city/v1/get", "/city/v1/get", "POST", 405},
		{"FOO", "/health", "HTTP /health", "/health", "_OTHER", 405},
		{"get", "/health", "HTTP /health", "/health", "_OTHER", 405},
		{"GET", "/no/such/path", "GET", "", "GET", 404},
		{"DELETE", "/", "DELETE", "", "DELETE", 404},
		{"GET", "/health/", "GET", "", "GET", 404},
		{"GET", "/h%65alth", "GET", "", "GET", 404},
		{"GET", "/health?" + strings.Repeat("p", 9000), "GET", "", "GET", 414},
	} {
		s.spans.Reset()
		s.send(t, tt.method, tt.target, "")
		var server []tracetest.SpanStub
		for _, span := range s.spans.GetSpans() {
			if span.SpanKind == trace.SpanKindServer {
				server = append(server, span)
			}
		}
		if len(server) != 1 {
			t.Errorf("%s %.40s: %d SERVER spans", tt.method, tt.target, len(server))
			continue
		}
		attrs := attributes(server[0])
		route, hasRoute := attrs["http.route"]
		if server[0].Name != tt.name || route.AsString() != tt.route || hasRoute != (tt.route != "") ||
			attrs["http.request.method"].AsString() != tt.attrMethod ||
			attrs["http.response.status_code"].AsInt64() != int64(tt.status) {
			t.Errorf("%s %.40s: span %q, attributes %v; want %q, route %q, method %s, status %d",
				tt.method, tt.target, server[0].Name, server[0].Attributes, tt.name, tt.route, tt.attrMethod, tt.status)
		}
		if server[0].Parent.IsValid() {
			t.Errorf("%s %.40s: a span without a caller has a parent", tt.method, tt.target)
		}
	}
}

// A caller's unsampled trace (flags 00) is followed: nothing is recorded, and Elasticsearch still
// gets the trace's traceparent, unsampled.
func TestTracingUnsampledCallerExportsNothingButPropagates(t *testing.T) {
	s := newTracedService(t, true)
	s.send(t, "GET", "/city/v1/get?id=1&language=en", "Traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\n")
	if spans := s.spans.GetSpans(); len(spans) != 0 {
		t.Errorf("%d spans recorded for an unsampled trace", len(spans))
	}
	sent := s.traceparentsSent()
	if len(sent) != 2 {
		t.Fatalf("%d Elasticsearch requests, want 2", len(sent))
	}
	for _, tp := range sent {
		if !strings.HasPrefix(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || !strings.HasSuffix(tp, "-00") {
			t.Errorf("traceparent %q, want the caller's trace, unsampled", tp)
		}
	}
}

// Tracing off: nothing is wrapped or installed, a caller's traceparent goes nowhere.
func TestTracingOffInstallsNothing(t *testing.T) {
	var off *Tracing
	handler := &struct{ http.Handler }{http.NotFoundHandler()}
	if off.Handler(handler) != http.Handler(handler) || off.Elasticsearch() != nil || off.Shutdown(context.Background()) != nil {
		t.Error("tracing off changed something")
	}
	if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
		t.Error("a global tracer provider is installed")
	}
	s := newTracedService(t, false)
	if status, _ := s.send(t, "GET", "/city/v1/get?id=1&language=en", "Traceparent: "+callerTraceparent+"\r\n"); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	for _, tp := range s.traceparentsSent() {
		if tp != "" {
			t.Errorf("Elasticsearch got traceparent %q with tracing off", tp)
		}
	}
}

// NewTracing's exporter is configured by the SDK's variables alone: with the endpoint pointed at
// a fake collector, Shutdown sends the ended spans there as OTLP HTTP/protobuf, and the service
// name comes from OTEL_SERVICE_NAME. The SDK reads the resource's variables once per process
// (resource.Default), and other tests have made tracer providers already: the test runs in a
// process of its own.
func TestNewTracingExportsOTLPOverHTTPOnShutdown(t *testing.T) {
	if os.Getenv("CITYREF_TRACING_TEST_PROCESS") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNewTracingExportsOTLPOverHTTPOnShutdown$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CITYREF_TRACING_TEST_PROCESS=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNewTracingExportsOTLPOverHTTPOnShutdown") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	type export struct {
		path, contentType string
		body              []byte
	}
	exports := make(chan export, 4)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		exports <- export{r.URL.Path, r.Header.Get("Content-Type"), body}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "cityref-go-kit-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000") // only Shutdown's flush sends the span
	var logs bytes.Buffer
	tracing, err := NewTracing(context.Background(), NewLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tracing.provider.Tracer("test").Start(context.Background(), "GET /health")
	span.End()
	if len(exports) != 0 {
		t.Fatal("exported before Shutdown despite OTEL_BSP_SCHEDULE_DELAY")
	}
	if err := tracing.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-exports:
		if e.path != "/v1/traces" || e.contentType != "application/x-protobuf" ||
			!bytes.Contains(e.body, []byte("cityref-go-kit-test")) || !bytes.Contains(e.body, []byte("GET /health")) {
			t.Errorf("export to %s (%s): %q", e.path, e.contentType, e.body)
		}
	default:
		t.Fatal("nothing exported on Shutdown")
	}
	if logs.Len() != 0 {
		t.Errorf("log lines: %s", logs.String())
	}
}
