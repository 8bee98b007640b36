package main

import (
	"math"
	"net/url"
	"os"
	"strconv"
	"time"
)

// Config is the service's configuration, read once from the environment at startup
// (spec/openapi.yaml, "Operation of a service").
type Config struct {
	Port                 int           // listen on all interfaces
	ElasticsearchURL     *url.URL      // may carry user:password@ (sent as basic auth)
	ElasticsearchTimeout time.Duration // one Elasticsearch round-trip
	LogLevel             string        // error, warn, info or debug
	TracingOn            bool          // OTEL_TRACES_EXPORTER=otlp: the OpenTelemetry SDK reads the rest of OTEL_*
}

// ConfigError names an invalid variable; it never echoes the value (ELASTICSEARCH_URL may
// carry a password).
type ConfigError struct {
	Variable string
	Expected string
}

func (e *ConfigError) Error() string {
	return "invalid " + e.Variable + ": expected " + e.Expected
}

// ConfigFromEnv reads PORT, ELASTICSEARCH_URL, ELASTICSEARCH_TIMEOUT_MS, LOG_LEVEL and
// OTEL_TRACES_EXPORTER.
func ConfigFromEnv() (Config, error) {
	return configFrom(os.LookupEnv)
}

// configFrom applies the defaults to unset variables; a variable set to "" is invalid.
func configFrom(lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	var err error
	get := func(name, def string) string {
		if v, ok := lookup(name); ok {
			return v
		}
		return def
	}
	if cfg.Port, err = parsePort(get("PORT", "8080")); err != nil {
		return Config{}, err
	}
	if cfg.ElasticsearchURL, err = parseElasticsearchURL(get("ELASTICSEARCH_URL", "http://127.0.0.1:9200")); err != nil {
		return Config{}, err
	}
	if cfg.ElasticsearchTimeout, err = parseTimeout(get("ELASTICSEARCH_TIMEOUT_MS", "2000")); err != nil {
		return Config{}, err
	}
	if cfg.LogLevel, err = parseLogLevel(get("LOG_LEVEL", "info")); err != nil {
		return Config{}, err
	}
	if cfg.TracingOn, err = parseTracesExporter(get("OTEL_TRACES_EXPORTER", "none")); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func parsePort(v string) (int, error) {
	n, ok := decimal(v)
	if !ok || n < 1 || n > 65535 {
		return 0, &ConfigError{"PORT", "an integer from 1 to 65535"}
	}
	return int(n), nil
}

func parseElasticsearchURL(v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, &ConfigError{"ELASTICSEARCH_URL", "an http or https URL"}
	}
	return u, nil
}

func parseTimeout(v string) (time.Duration, error) {
	if !isDigits(v) {
		return 0, &ConfigError{"ELASTICSEARCH_TIMEOUT_MS", "an integer from 1 to 2147483647 (milliseconds)"}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n < 1 || n > math.MaxInt32 { // the spec's range: 1 to 2147483647
		return 0, &ConfigError{"ELASTICSEARCH_TIMEOUT_MS", "an integer from 1 to 2147483647 (milliseconds)"}
	}
	return time.Duration(n) * time.Millisecond, nil
}

func parseLogLevel(v string) (string, error) {
	switch v {
	case "error", "warn", "info", "debug":
		return v, nil
	}
	return "", &ConfigError{"LOG_LEVEL", "one of error, warn, info, debug"}
}

// parseTracesExporter: tracing is on for otlp only, off for none (the default here, unlike the
// SDK's own default of otlp: the spec's tracing is opt-in). The other OTEL_* variables are the
// SDK's to read (telemetry.go), not ours.
func parseTracesExporter(v string) (bool, error) {
	switch v {
	case "otlp":
		return true, nil
	case "none":
		return false, nil
	}
	return false, &ConfigError{"OTEL_TRACES_EXPORTER", "otlp or none"}
}

// isDigits: at least one byte, ASCII digits only (no sign, no spaces).
func isDigits(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// decimal parses ASCII digits (leading zeros allowed) into a uint64.
func decimal(v string) (uint64, bool) {
	if !isDigits(v) {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}
