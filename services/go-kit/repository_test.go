package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/cityref/cityref/services/go-kit/generated/models"
)

const testTimeout = 300 * time.Millisecond

func newTestRepository(t *testing.T, rawURL string) *CityRepository {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	repository, err := NewCityRepository(u, testTimeout, log.NewNopLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return repository
}

// fakeElasticsearch answers every request with status and body, as Elasticsearch does
// (X-Elastic-Product: Elasticsearch), and counts the requests.
func fakeElasticsearch(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(server.Close)
	return server, &requests
}

// closedPort is an address nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := l.Addr().String()
	l.Close()
	return "http://" + address
}

// resetting accepts connections, reads the request and resets the connection (RST).
func resetting(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Read(make([]byte, 4096))
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	}()
	return "http://" + l.Addr().String()
}

// hanging accepts connections and never answers.
func hanging(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(func() { close(release); server.Close() })
	return server.URL
}

func TestRepositoryFailureMapping(t *testing.T) {
	const cityFound = `{"_index":"city_v1","_id":"1","found":true,"_source":{"id":1}}`
	tests := []struct {
		name string
		url  func(t *testing.T) string
		want error // nil: a plain not-found
	}{
		{"refused", closedPort, errUnavailable},
		{"reset", resetting, errUnavailable},
		{"no answer", hanging, errTimeout},
		{"503", status(503, `{"error":{"type":"unavailable_shards_exception"},"status":503}`), errUnavailable},
		{"429", status(429, `{"error":{"type":"es_rejected_execution_exception"},"status":429}`), errUnavailable},
		{"500", status(500, `{"error":{"type":"exception"},"status":500}`), errUnavailable},
		{"400", status(400, `{"error":{"type":"illegal_argument_exception"},"status":400}`), errUnavailable},
		{"404 index_not_found", status(404, `{"error":{"type":"index_not_found_exception","reason":"no such index [city]"},"status":404}`), errUnavailable},
		{"200 not JSON", status(200, `<html>not elasticsearch</html>`), errUnavailable},
		{"200 not found", status(200, `{"_index":"city_v1","_id":"1","found":false}`), errUnavailable},
		{"200 without _source", status(200, `{"_index":"city_v1","_id":"1","found":true}`), errUnavailable},
		{"200 _source not an object", status(200, `{"found":true,"_source":[1]}`), errUnavailable},
		{"404 found", status(404, cityFound), errUnavailable},
		{"301", status(301, `{}`), errUnavailable},
		{"plain not found", status(404, `{"_index":"city_v1","_id":"1","found":false}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repository := newTestRepository(t, tt.url(t))
			start := time.Now()
			source, err := repository.City(context.Background(), 1, models.EN)
			if !errors.Is(err, tt.want) || source != nil {
				t.Errorf("got %v, %v; want nil, %v", source, err, tt.want)
			}
			elapsed := time.Since(start)
			if errors.Is(tt.want, errTimeout) && (elapsed < testTimeout || elapsed > testTimeout+time.Second) {
				t.Errorf("timeout after %v, want %v", elapsed, testTimeout)
			}
		})
	}
}

// A failed round-trip is logged once, at warn, with the failure's text in `error` (the spec's
// Logging rule).
func TestBackendFailuresAreLoggedWithTheirError(t *testing.T) {
	u, err := url.Parse(closedPort(t))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	repository, err := NewCityRepository(u, testTimeout, NewLogger(&logs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repository.City(context.Background(), 1, models.EN); !errors.Is(err, errUnavailable) {
		t.Fatalf("got %v, want %v", err, errUnavailable)
	}
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, logs.String())
	}
	text, _ := line["error"].(string)
	if line["level"] != "warn" || line["msg"] != "Elasticsearch unavailable" || !strings.Contains(text, "connection refused") {
		t.Errorf("log line %s", logs.String())
	}
}

func status(code int, body string) func(t *testing.T) string {
	return func(t *testing.T) string {
		server, _ := fakeElasticsearch(t, code, body)
		return server.URL
	}
}

func TestFoundDocumentIsItsSource(t *testing.T) {
	var target string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target = r.URL.RequestURI()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		_, _ = w.Write([]byte(`{"_index":"city_v1","_id":"16","found":true,"_source":{"id":16,"name.en":"Prague"}}`))
	}))
	defer server.Close()
	source, err := newTestRepository(t, server.URL).City(context.Background(), 16, models.EN)
	if err != nil || string(source["id"]) != "16" || string(source["name.en"]) != `"Prague"` {
		t.Fatalf("got %v, %v", source, err)
	}
	want := "/city/_doc/16?_source_includes=id%2CcountryIso%2CisFeatured%2CregionId%2Cname.en"
	if target != want {
		t.Errorf("request %q, want %q", target, want)
	}
}

// go-elasticsearch checks X-Elastic-Product on the first 2xx answer only: a server that is not
// Elasticsearch fails the startup check, and once that check has passed, fabricated answers
// (the conformance suite's faulting proxy) are judged by status and body alone.
func TestProductCheck(t *testing.T) {
	notElasticsearch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"green"}`))
	}))
	defer notElasticsearch.Close()
	err := newTestRepository(t, notElasticsearch.URL).CheckHealth(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not Elasticsearch") {
		t.Errorf("startup check against a non-Elasticsearch server: %v", err)
	}
	healthy, _ := fakeElasticsearch(t, 200, `{"status":"green"}`)
	if err := newTestRepository(t, healthy.URL).CheckHealth(context.Background()); err != nil {
		t.Errorf("startup check: %v", err)
	}
	unhealthy, _ := fakeElasticsearch(t, 503, `{}`)
	if err := newTestRepository(t, unhealthy.URL).CheckHealth(context.Background()); err == nil {
		t.Error("startup check passed on a 503")
	}
}

func TestCredentialsAreSentAsBasicAuth(t *testing.T) {
	var authorization, target string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authorization, target = r.Header.Get("Authorization"), r.URL.String()
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer server.Close()
	u := strings.Replace(server.URL, "http://", "http://cityref:s3cr%40t@", 1)
	if err := newTestRepository(t, u).CheckHealth(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("cityref:s3cr@t"))
	if authorization != want || target != "/_cluster/health" {
		t.Errorf("Authorization %q, target %q; want %q, /_cluster/health", authorization, target, want)
	}
}

func TestFoundRegionsAreCachedMissesAndFailuresAreNot(t *testing.T) {
	found, foundRequests := fakeElasticsearch(t, 200, `{"_index":"region_v1","_id":"1","found":true,"_source":{"name.en":"Prague"}}`)
	repository := newTestRepository(t, found.URL)
	for range 3 {
		region, err := repository.Region(context.Background(), 1)
		if err != nil || string(region["name.en"]) != `"Prague"` {
			t.Fatalf("got %v, %v", region, err)
		}
	}
	if n := foundRequests.Load(); n != 1 {
		t.Errorf("found region: %d requests, want 1", n)
	}

	missing, missingRequests := fakeElasticsearch(t, 404, `{"_index":"region_v1","_id":"99","found":false}`)
	repository = newTestRepository(t, missing.URL)
	for range 3 {
		if region, err := repository.Region(context.Background(), 99); region != nil || err != nil {
			t.Fatalf("got %v, %v", region, err)
		}
	}
	if n := missingRequests.Load(); n != 3 {
		t.Errorf("missing region: %d requests, want 3", n)
	}

	failing, failingRequests := fakeElasticsearch(t, 503, `{}`)
	repository = newTestRepository(t, failing.URL)
	for range 2 {
		if _, err := repository.Region(context.Background(), 4); !errors.Is(err, errUnavailable) {
			t.Fatalf("got %v", err)
		}
	}
	if n := failingRequests.Load(); n != 2 {
		t.Errorf("failing region: %d requests, want 2", n)
	}
}
