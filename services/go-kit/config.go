package main

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Config is the service's configuration (spec/openapi.yaml, "Operation of a service"), read once
// from the environment at startup by envconfig: an unset variable takes its default, a set one
// (also set to "", which is then invalid) is decoded by its field's type.
type Config struct {
	Port                 Port             `envconfig:"PORT" default:"8080"` // listen on all interfaces
	ElasticsearchURL     ElasticsearchURL `envconfig:"ELASTICSEARCH_URL" default:"http://127.0.0.1:9200"`
	ElasticsearchTimeout Milliseconds     `envconfig:"ELASTICSEARCH_TIMEOUT_MS" default:"2000"`
	LogLevel             LogLevel         `envconfig:"LOG_LEVEL" default:"info"`
	// OTEL_TRACES_EXPORTER=otlp: the OpenTelemetry SDK reads the rest of OTEL_* (telemetry.go).
	// Off by default, unlike the SDK's own default (otlp): the spec's tracing is opt-in.
	TracingOn TracesExporter `envconfig:"OTEL_TRACES_EXPORTER" default:"none"`
}

// ConfigError names an invalid variable and what it expects; it never echoes the value
// (ELASTICSEARCH_URL may carry a password; envconfig's ParseError would).
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
	var cfg Config
	err := envconfig.Process("", &cfg)
	if parseErr := (*envconfig.ParseError)(nil); errors.As(err, &parseErr) {
		return Config{}, &ConfigError{parseErr.KeyName, parseErr.Err.Error()}
	}
	return cfg, err
}

// The variables' types: each decodes its text as the spec allows it, numbers as ASCII digits
// only (strconv also takes a sign).

type (
	Port             int
	ElasticsearchURL struct{ *url.URL } // may carry user:password@ (sent as basic auth)
	Milliseconds     time.Duration      // one Elasticsearch round-trip
	LogLevel         string             // error, warn, info or debug
	TracesExporter   bool               // otlp (true) or none
)

func (p *Port) Decode(v string) error {
	n, ok := decimal(v)
	if !ok || n < 1 || n > 65535 {
		return errors.New("an integer from 1 to 65535")
	}
	*p = Port(n)
	return nil
}

func (u *ElasticsearchURL) Decode(v string) error {
	parsed, err := url.Parse(v)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Hostname() == "" ||
		parsed.Opaque != "" || parsed.RawQuery != "" || parsed.ForceQuery || parsed.Fragment != "" {
		return errors.New("an http or https URL")
	}
	u.URL = parsed
	return nil
}

func (m *Milliseconds) Decode(v string) error {
	n, ok := decimal(v)
	if !ok || n < 1 || n > math.MaxInt32 { // the spec's range: 1 to 2147483647
		return errors.New("an integer from 1 to 2147483647 (milliseconds)")
	}
	*m = Milliseconds(time.Duration(n) * time.Millisecond)
	return nil
}

func (l *LogLevel) Decode(v string) error {
	switch v {
	case "error", "warn", "info", "debug":
		*l = LogLevel(v)
		return nil
	}
	return errors.New("one of error, warn, info, debug")
}

func (t *TracesExporter) Decode(v string) error {
	if v != "otlp" && v != "none" {
		return errors.New("otlp or none")
	}
	*t = v == "otlp"
	return nil
}

// isDigits: at least one byte, ASCII digits only (no sign, no spaces).
func isDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

// decimal parses ASCII digits (leading zeros allowed) into a uint64.
func decimal(v string) (uint64, bool) {
	n, err := strconv.ParseUint(v, 10, 64)
	return n, isDigits(v) && err == nil
}
