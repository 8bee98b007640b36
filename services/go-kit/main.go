// Command cityref-go-kit is the cityref city service (spec/openapi.yaml) on go-kit: startup,
// the HTTP server and graceful shutdown. See README.md for the design.
package main

import (
	"context"
	_ "embed"
	"errors"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// apiDocs is spec/openapi.json, served byte for byte. `make generate` copies it into
// generated/ (go:embed cannot reach outside the module); `make check-generated` and a unit
// test fail when the copy drifts from the spec.
//
//go:embed generated/openapi.json
var apiDocs []byte

const (
	// startupCheckLimit caps the startup round-trip whatever ELASTICSEARCH_TIMEOUT_MS says, so
	// that a failing start exits well within the contract's 15 s.
	startupCheckLimit = 10 * time.Second
	// shutdownTimeout is how long in-flight requests get after SIGTERM/SIGINT (15 s in all).
	shutdownTimeout = 10 * time.Second
	// tracingShutdownTimeout is how long the tracer provider then gets to export the spans
	// ended so far (the 15 s include it).
	tracingShutdownTimeout = 4 * time.Second
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck())
	}
	os.Exit(run())
}

// healthcheck is the spec's health check mode: GET /health on 127.0.0.1:PORT (8080 when unset or
// invalid), 0 for a 200 within 2 s, else 1. For HEALTHCHECK in an image with no shell or curl.
func healthcheck() int {
	port, err := strconv.Atoi(os.Getenv("PORT"))
	if err != nil || port < 1 || port > 65535 {
		port = 8080
	}
	client := http.Client{Timeout: 2 * time.Second}
	res, err := client.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/health")
	if err != nil {
		return 1
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

func run() int {
	// Installed first, so that a signal during startup never meets the default (fatal) action.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := NewLogger(os.Stdout)
	cfg, err := ConfigFromEnv()
	if err != nil {
		var cfgErr *ConfigError
		errors.As(err, &cfgErr)
		level.Error(logger).Log("msg", "invalid configuration", "variable", cfgErr.Variable, "error", err)
		return 1
	}
	logger = level.NewFilter(logger, levelFilter(cfg.LogLevel))
	// With go.mod at go 1.25+ the runtime defaults GOMAXPROCS to min(logical CPUs,
	// max(2, ceil(quota/period))) of the process's cgroup (v1 or v2), and follows changes.
	level.Info(logger).Log("msg", "starting", "go", runtime.Version(),
		"gomaxprocs", runtime.GOMAXPROCS(0), "num_cpu", runtime.NumCPU())

	var tracing *Tracing // nil: tracing off (OTEL_TRACES_EXPORTER unset or none), nothing installed
	if cfg.TracingOn {
		if tracing, err = NewTracing(ctx, logger); err != nil {
			level.Error(logger).Log("msg", "cannot set up OpenTelemetry tracing", "error", err)
			return 1
		}
		defer shutdownTracing(tracing, logger) // on every way out; a second Shutdown does nothing
	}

	esURL := cfg.ElasticsearchURL.Redacted() // password shown as xxxxx, as the spec says
	repository, err := NewCityRepository(cfg.ElasticsearchURL.URL, time.Duration(cfg.ElasticsearchTimeout), logger, tracing.Elasticsearch())
	if err != nil {
		level.Error(logger).Log("msg", "cannot create an Elasticsearch client for "+esURL, "url", esURL, "error", err)
		return 1
	}
	checkCtx, cancel := context.WithTimeout(ctx, min(time.Duration(cfg.ElasticsearchTimeout), startupCheckLimit))
	err = repository.CheckHealth(checkCtx)
	cancel()
	if ctx.Err() != nil {
		level.Info(logger).Log("msg", "signal received before listening; stopped")
		return 0
	}
	if err != nil {
		level.Error(logger).Log("msg", "Elasticsearch at "+esURL+" is not reachable", "url", esURL, "error", err)
		return 1
	}
	level.Info(logger).Log("msg", "Elasticsearch at "+esURL+" is reachable", "url", esURL)

	endpoints := MakeEndpoints(NewCityService(repository), apiDocs, prometheus.DefaultGatherer)
	handler := tracing.Handler(Instrument(NewHTTPHandler(endpoints, logger), logger, NewRequestDuration(prometheus.DefaultRegisterer)))
	server := NewHTTPServer(handler, logger)

	listener, err := net.Listen("tcp", ":"+strconv.Itoa(int(cfg.Port))) // all interfaces
	if err != nil {
		level.Error(logger).Log("msg", "cannot listen on port "+strconv.Itoa(int(cfg.Port)), "port", cfg.Port, "error", err)
		return 1
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- server.Serve(listener) }()
	level.Info(logger).Log("msg", "listening on port "+strconv.Itoa(int(cfg.Port)), "port", cfg.Port)

	select {
	case err := <-serveErr:
		level.Error(logger).Log("msg", "server failed", "error", err)
		return 1
	case <-ctx.Done():
	}
	level.Info(logger).Log("msg", "signal received; stopping gracefully")
	// Shutdown closes the listener at once (new connections are refused), closes idle
	// connections and waits for in-flight requests.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		level.Warn(logger).Log("msg", "in-flight requests did not finish in time", "error", err)
		_ = server.Close()
	}
	shutdownTracing(tracing, logger) // no-op when tracing is off
	level.Info(logger).Log("msg", "stopped")
	return 0
}

// shutdownTracing flushes the spans ended so far to the exporter, within tracingShutdownTimeout.
func shutdownTracing(tracing *Tracing, logger log.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
	defer cancel()
	if err := tracing.Shutdown(ctx); err != nil {
		level.Warn(logger).Log("msg", "spans not exported before stopping", "error", err)
	}
}
