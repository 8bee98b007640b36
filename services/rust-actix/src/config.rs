//! Configuration from the environment, validated once at startup: the four variables of the
//! spec and `OTEL_TRACES_EXPORTER`, which turns tracing on.

use std::fmt;
use std::time::Duration;

use elasticsearch::http::Url;
use tracing::level_filters::LevelFilter;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Port to listen on, on all interfaces.
    pub port: u16,
    /// Base URL of Elasticsearch, possibly with `user:password@`.
    pub elasticsearch_url: Url,
    /// Deadline for one Elasticsearch round-trip.
    pub elasticsearch_timeout: Duration,
    pub log_level: LevelFilter,
    /// `OTEL_TRACES_EXPORTER=otlp`: tracing on, the OpenTelemetry SDK reads the rest of `OTEL_*`
    /// (`telemetry::init_tracing`). Unset or `none`: off.
    pub tracing: bool,
}

/// An invalid environment variable; the message names it but never echoes its value
/// (`ELASTICSEARCH_URL` may carry a password).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub variable: &'static str,
    pub expected: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: expected {}", self.variable, self.expected)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    pub fn from_env() -> Result<Config, ConfigError> {
        // A value that is not valid Unicode reads as "", which every variable rejects.
        Config::from_vars(|name| std::env::var_os(name).map(|v| v.into_string().unwrap_or_default()))
    }

    /// Reads the variables through `get`, applying the spec's defaults to unset ones.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        Ok(Config {
            port: read(&get, "PORT", "8080", "an integer from 1 to 65535", |v| {
                decimal(v).and_then(|n| u16::try_from(n).ok()).filter(|&n| n >= 1)
            })?,
            elasticsearch_url: read(
                &get,
                "ELASTICSEARCH_URL",
                "http://127.0.0.1:9200",
                "an http or https URL",
                parse_url,
            )?,
            elasticsearch_timeout: read(
                &get,
                "ELASTICSEARCH_TIMEOUT_MS",
                "2000",
                "an integer from 1 to 2147483647 (milliseconds)",
                |v| {
                    decimal(v)
                        .filter(|n| (1..=2_147_483_647).contains(n))
                        .map(Duration::from_millis)
                },
            )?,
            log_level: read(
                &get,
                "LOG_LEVEL",
                "info",
                "one of error, warn, info, debug",
                |v| match v {
                    "error" => Some(LevelFilter::ERROR),
                    "warn" => Some(LevelFilter::WARN),
                    "info" => Some(LevelFilter::INFO),
                    "debug" => Some(LevelFilter::DEBUG),
                    _ => None,
                },
            )?,
            // Off by default, unlike the SDK's own default (`otlp`): the spec's tracing is opt-in.
            // The other OTEL_* variables are the SDK's to read, not ours.
            tracing: read(&get, "OTEL_TRACES_EXPORTER", "none", "otlp or none", |v| match v {
                "otlp" => Some(true),
                "none" => Some(false),
                _ => None,
            })?,
        })
    }
}

/// The variable's value (or its default) parsed by `parse`; `None` from `parse` means invalid.
fn read<T>(
    get: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    default: &str,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, ConfigError> {
    let value = get(variable).unwrap_or_else(|| default.to_owned());
    parse(&value).ok_or(ConfigError { variable, expected })
}

/// ASCII decimal digits only (no sign, no spaces), fitting in a u64.
fn decimal(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

fn parse_url(value: &str) -> Option<Url> {
    let url = Url::parse(value).ok()?;
    let valid = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|host| !host.is_empty())
        && url.query().is_none()
        && url.fragment().is_none();
    valid.then_some(url)
}

/// The URL as it may be logged: a password is replaced by `xxxxx`, as the spec says (as Go's
/// `url.URL.Redacted`).
pub fn redact(url: &Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        // Cannot fail: the URL has a host, since it has credentials.
        let _ = url.set_password(Some("xxxxx"));
    }
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_vars(|name| vars.get(name).cloned())
    }

    fn invalid(variable: &str, value: &str) -> &'static str {
        config(&[(variable, value)]).expect_err(value).variable
    }

    #[test]
    fn defaults() {
        let config = config(&[]).unwrap();
        assert_eq!(config.port, 8080);
        assert_eq!(config.elasticsearch_url.as_str(), "http://127.0.0.1:9200/");
        assert_eq!(config.elasticsearch_timeout, Duration::from_millis(2000));
        assert_eq!(config.log_level, LevelFilter::INFO);
        assert!(!config.tracing);
    }

    #[test]
    fn valid_values() {
        assert_eq!(config(&[("PORT", "1")]).unwrap().port, 1);
        assert_eq!(config(&[("PORT", "00080")]).unwrap().port, 80);
        let config = config(&[
            ("PORT", "65535"),
            ("ELASTICSEARCH_URL", "https://elastic:s3cr%40t@es.example:9243"),
            ("ELASTICSEARCH_TIMEOUT_MS", "1"),
            ("LOG_LEVEL", "debug"),
        ])
        .unwrap();
        assert_eq!(config.port, 65535);
        assert_eq!(config.elasticsearch_url.username(), "elastic");
        assert_eq!(config.elasticsearch_timeout, Duration::from_millis(1));
        assert_eq!(config.log_level, LevelFilter::DEBUG);
        assert!(!config.tracing);
    }

    #[test]
    fn tracing_is_on_for_otlp_only() {
        assert!(!config(&[("OTEL_TRACES_EXPORTER", "none")]).unwrap().tracing);
        assert!(config(&[("OTEL_TRACES_EXPORTER", "otlp")]).unwrap().tracing);
        // The SDK's other variables are not ours to read or check.
        assert!(!config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url")]).unwrap().tracing);
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for port in [
            "0",
            "65536",
            "-1",
            "+80",
            " 80",
            "80 ",
            "8o",
            "",
            "99999999999999999999999",
        ] {
            assert_eq!(invalid("PORT", port), "PORT");
        }
        for url in [
            "",
            "127.0.0.1:9200",
            "ftp://host",
            "http://",
            "http://host/?q=1",
            "not a url",
        ] {
            assert_eq!(invalid("ELASTICSEARCH_URL", url), "ELASTICSEARCH_URL");
        }
        for timeout in [
            "0",
            "-5",
            "1.5",
            "",
            "1e3",
            "2s",
            "2147483648",
            "99999999999999999999999",
        ] {
            assert_eq!(invalid("ELASTICSEARCH_TIMEOUT_MS", timeout), "ELASTICSEARCH_TIMEOUT_MS");
        }
        for level in ["", "INFO", "trace", "warning"] {
            assert_eq!(invalid("LOG_LEVEL", level), "LOG_LEVEL");
        }
        for exporter in ["", "OTLP", "otlp ", "jaeger", "zipkin", "console", "otlp,none"] {
            assert_eq!(invalid("OTEL_TRACES_EXPORTER", exporter), "OTEL_TRACES_EXPORTER");
        }
        assert_eq!(
            config(&[("OTEL_TRACES_EXPORTER", "jaeger")]).unwrap_err().to_string(),
            "invalid OTEL_TRACES_EXPORTER: expected otlp or none"
        );
    }

    #[test]
    fn error_message_does_not_echo_the_value() {
        let error = config(&[("ELASTICSEARCH_URL", "ftp://user:hunter2@host")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid ELASTICSEARCH_URL: expected an http or https URL"
        );
    }

    #[test]
    fn redacts_the_password() {
        let url = Url::parse("http://elastic:hunter2@127.0.0.1:9200").unwrap();
        assert_eq!(redact(&url), "http://elastic:xxxxx@127.0.0.1:9200/");
        // A percent-encoded password is replaced whole; a user without a password is kept.
        let url = Url::parse("https://elastic:s3cr%40t@es.example:9243/base/").unwrap();
        assert_eq!(redact(&url), "https://elastic:xxxxx@es.example:9243/base/");
        let url = Url::parse("http://elastic@127.0.0.1:9200").unwrap();
        assert_eq!(redact(&url), "http://elastic@127.0.0.1:9200/");
        let url = Url::parse("http://127.0.0.1:9200").unwrap();
        assert_eq!(redact(&url), "http://127.0.0.1:9200/");
    }
}
