package main

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// configOf reads the configuration from exactly vars: the five variables not in vars are unset.
func configOf(t *testing.T, vars map[string]string) (Config, error) {
	for _, name := range []string{"PORT", "ELASTICSEARCH_URL", "ELASTICSEARCH_TIMEOUT_MS", "LOG_LEVEL", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(name, "") // restored after the test
		if v, ok := vars[name]; ok {
			t.Setenv(name, v)
		} else {
			os.Unsetenv(name)
		}
	}
	return ConfigFromEnv()
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := configOf(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 8080 || cfg.ElasticsearchURL.String() != "http://127.0.0.1:9200" ||
		cfg.ElasticsearchTimeout != Milliseconds(2*time.Second) || cfg.LogLevel != "info" || cfg.TracingOn {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestConfigValidValues(t *testing.T) {
	cfg, err := configOf(t, map[string]string{
		"PORT":                     "65535",
		"ELASTICSEARCH_URL":        "https://elastic:s3cr%40t@es.example:9243/prefix",
		"ELASTICSEARCH_TIMEOUT_MS": "1",
		"LOG_LEVEL":                "debug",
	})
	if err != nil {
		t.Fatal(err)
	}
	password, _ := cfg.ElasticsearchURL.User.Password()
	if cfg.Port != 65535 || cfg.ElasticsearchURL.User.Username() != "elastic" || password != "s3cr@t" ||
		cfg.ElasticsearchTimeout != Milliseconds(time.Millisecond) || cfg.LogLevel != "debug" {
		t.Errorf("%+v", cfg)
	}
	tests := []struct {
		name, value string
		check       func(Config) bool
	}{
		{"PORT", "1", func(c Config) bool { return c.Port == 1 }},
		{"PORT", "00080", func(c Config) bool { return c.Port == 80 }},
		{"ELASTICSEARCH_URL", "HTTP://127.0.0.1:9250", func(c Config) bool { return c.ElasticsearchURL.Scheme == "http" }},
		{"ELASTICSEARCH_TIMEOUT_MS", "2147483647", func(c Config) bool { return c.ElasticsearchTimeout == Milliseconds(math.MaxInt32*time.Millisecond) }},
		{"LOG_LEVEL", "error", func(c Config) bool { return c.LogLevel == "error" }},
		{"LOG_LEVEL", "warn", func(c Config) bool { return c.LogLevel == "warn" }},
		{"OTEL_TRACES_EXPORTER", "otlp", func(c Config) bool { return bool(c.TracingOn) }},
		{"OTEL_TRACES_EXPORTER", "none", func(c Config) bool { return !bool(c.TracingOn) }},
	}
	for _, tt := range tests {
		cfg, err := configOf(t, map[string]string{tt.name: tt.value})
		if err != nil || !tt.check(cfg) {
			t.Errorf("%s=%q: %+v, %v", tt.name, tt.value, cfg, err)
		}
	}
}

func TestConfigInvalidValuesNameTheVariable(t *testing.T) {
	invalid := map[string][]string{
		"PORT":                     {"", "0", "65536", "-1", "+80", " 80", "80 ", "8o", "abc", "1e3", "99999999999999999999999"},
		"ELASTICSEARCH_URL":        {"", "not a url", "127.0.0.1:9200", "ftp://127.0.0.1:9250", "http://", "http:///x", "http://host/?q=1", "http://host/#f", "http:host"},
		"ELASTICSEARCH_TIMEOUT_MS": {"", "0", "000", "-5", "+5", "abc", "1.5", "1e3", "2s", " 1", "2147483648", "99999999999999999999999"},
		"LOG_LEVEL":                {"", "loud", "INFO", "Info", "trace", "warning", " info"},
		"OTEL_TRACES_EXPORTER":     {"", "OTLP", "None", "otlp ", " none", "console", "zipkin", "jaeger", "logging", "otlp,none", "grpc", "true"},
	}
	for variable, values := range invalid {
		for _, value := range values {
			_, err := configOf(t, map[string]string{variable: value})
			var cfgErr *ConfigError
			if !errors.As(err, &cfgErr) || cfgErr.Variable != variable {
				t.Errorf("%s=%q: got %v, want a ConfigError naming %s", variable, value, err, variable)
				continue
			}
			if !strings.Contains(err.Error(), variable) {
				t.Errorf("%s=%q: message %q does not name the variable", variable, value, err)
			}
		}
	}
}

func TestConfigErrorDoesNotEchoTheValue(t *testing.T) {
	_, err := configOf(t, map[string]string{"ELASTICSEARCH_URL": "ftp://user:hunter2@host"})
	if err == nil || err.Error() != "invalid ELASTICSEARCH_URL: expected an http or https URL" {
		t.Errorf("got %v", err)
	}
}

func TestRedactedURL(t *testing.T) {
	cfg, err := configOf(t, map[string]string{"ELASTICSEARCH_URL": "http://elastic:hunter2@127.0.0.1:9200"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ElasticsearchURL.Redacted(); got != "http://elastic:xxxxx@127.0.0.1:9200" {
		t.Errorf("got %q", got)
	}
}
