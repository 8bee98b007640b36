//! Observability: JSON-lines logging on stdout, the request-duration histogram, the middleware
//! that logs and measures every request, and tracing (OpenTelemetry, on with
//! `OTEL_TRACES_EXPORTER=otlp`): the SDK's setup, the server span of a request and the client
//! span of an Elasticsearch request.

use std::io::Write;
use std::num::NonZero;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::HeaderMap as RequestHeaderMap;
use actix_web::middleware::Next;
use elasticsearch::http::Url;
use elasticsearch::http::headers::HeaderMap;
use log::kv::{self, VisitSource};
use log::{LevelFilter, Log, Metadata, Record, info};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{FutureExt, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue, global};
use opentelemetry_http::HeaderInjector;
use opentelemetry_otlp::{ExporterBuildError, Protocol, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prometheus::{Encoder, HistogramOpts, HistogramVec, TextEncoder};
use time::OffsetDateTime;

use crate::errors::AppError;
use time::format_description::well_known::Iso8601;
use time::format_description::well_known::iso8601::{Config, EncodedConfig, TimePrecision};

/// `Content-Type` of `/metrics` (Prometheus text exposition format 0.0.4).
pub const METRICS_CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// OpenTelemetry's `http.server.request.duration`, in the default registry.
static REQUEST_DURATION: LazyLock<HistogramVec> = LazyLock::new(|| {
    let opts = HistogramOpts::new(
        "http_server_request_duration_seconds",
        "Duration of HTTP server requests.",
    )
    .buckets(BUCKETS.to_vec());
    let histogram = HistogramVec::new(
        opts,
        &["http_request_method", "http_route", "http_response_status_code"],
    )
    .unwrap();
    prometheus::register(Box::new(histogram.clone())).expect("registered once");
    histogram
});

/// Middleware: one `info` line and one histogram observation per request, whatever answered it.
/// The `http_route` label is the listed path the request's path matched (`match_pattern`: the
/// resource routing matched, or for a 414, answered before routing, the resource map's match),
/// else "" (an unknown path; see `transport::app`).
pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().to_string(), |target| target.to_string());
    let response = next.call(req).await?;
    let elapsed = start.elapsed();
    let route = response.request().match_pattern().unwrap_or_default();
    let status = response.status().as_u16();
    REQUEST_DURATION
        .with_label_values(&[method_label(&method), route.as_str(), response.status().as_str()])
        .observe(elapsed.as_secs_f64());
    let duration_ms = elapsed.as_micros() as f64 / 1000.0;
    info!(method = method.as_str(), path = path.as_str(), status = status, duration_ms = duration_ms; "request");
    Ok(response)
}

/// The methods OpenTelemetry names (RFC 9110's and PATCH); any other is `_OTHER`.
const KNOWN_METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];
const OTHER_METHOD: &str = "_OTHER";

/// The method as OpenTelemetry labels it: RFC 9110's methods and PATCH, else `_OTHER`.
fn method_label(method: &Method) -> &'static str {
    KNOWN_METHODS
        .into_iter()
        .find(|known| *known == method.as_str())
        .unwrap_or(OTHER_METHOD)
}

/// The instrumentation scope of this service's spans.
const TRACER_NAME: &str = env!("CARGO_PKG_NAME");
/// The longest wait for the last spans' export at shutdown: the spec's 15 s from the stop signal
/// minus the server's 10 s for requests in flight, with a second to spare.
const TRACING_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(4);

// Stable HTTP semantic-convention attributes (the spec names the first three).
const HTTP_REQUEST_METHOD: &str = "http.request.method";
const HTTP_RESPONSE_STATUS_CODE: &str = "http.response.status_code";
const HTTP_ROUTE: &str = "http.route";
const HTTP_REQUEST_METHOD_ORIGINAL: &str = "http.request.method_original";
const ERROR_TYPE: &str = "error.type";
const SERVER_ADDRESS: &str = "server.address";
const SERVER_PORT: &str = "server.port";
// Elasticsearch's database semantic conventions, as the official clients' instrumentations use them.
const DB_SYSTEM_NAME: &str = "db.system.name";
const DB_OPERATION_NAME: &str = "db.operation.name";
const DB_INDEX: &str = "db.elasticsearch.path_parts.index";
const DB_ID: &str = "db.elasticsearch.path_parts.id";

/// Tracing on (`OTEL_TRACES_EXPORTER=otlp`): the OTLP span exporter (http/protobuf, over reqwest's
/// blocking client) behind the SDK's batch span processor, and the W3C trace-context propagator,
/// installed as OpenTelemetry's globals. The SDK reads its standard variables itself:
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT` (default
/// `http://localhost:4318`), `..._HEADERS`, `..._TIMEOUT`, `OTEL_TRACES_SAMPLER(_ARG)` (default
/// `parentbased_always_on`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`.
/// Returns the provider, for [`shutdown_tracing`].
pub fn init_tracing() -> Result<SdkTracerProvider, ExporterBuildError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()?;
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
    install_tracing(&provider);
    Ok(provider)
}

/// Makes `provider` and the W3C `traceparent`/`tracestate` propagator OpenTelemetry's globals.
pub fn install_tracing(provider: &SdkTracerProvider) {
    global::set_text_map_propagator(TraceContextPropagator::new());
    global::set_tracer_provider(provider.clone());
}

/// Exports the spans still queued and stops the exporter, within [`TRACING_SHUTDOWN_TIMEOUT`].
pub fn shutdown_tracing(provider: &SdkTracerProvider) -> OTelSdkResult {
    provider.shutdown_with_timeout(TRACING_SHUTDOWN_TIMEOUT)
}

/// Middleware (tracing on, outermost): one SERVER span per request, the child of the caller's
/// `traceparent` if it sent one, current while the request is served (so Elasticsearch requests
/// are its children). Named `<method> <route>` with `http.route` when routing matched a listed
/// path (the pattern `observe` labels too), else the bare method; `http.request.method` and
/// `http.response.status_code` as OpenTelemetry's stable HTTP conventions say (`_OTHER` and the
/// span name `HTTP` for a method they do not list).
pub async fn trace_request(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let parent = global::get_text_map_propagator(|propagator| propagator.extract(&RequestHeaders(req.headers())));
    let method = method_label(req.method());
    let mut attributes = vec![KeyValue::new(HTTP_REQUEST_METHOD, method)];
    let name = if method == OTHER_METHOD {
        attributes.push(KeyValue::new(HTTP_REQUEST_METHOD_ORIGINAL, req.method().to_string()));
        "HTTP"
    } else {
        method
    };
    let tracer = global::tracer(TRACER_NAME);
    let span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(&tracer, &parent);
    let cx = parent.with_span(span);
    let result = next.call(req).with_context(cx.clone()).await;
    let span = cx.span();
    let status = match &result {
        Ok(response) => {
            if let Some(route) = response.request().match_pattern() {
                span.update_name(format!("{name} {route}"));
                span.set_attribute(KeyValue::new(HTTP_ROUTE, route));
            }
            response.status()
        }
        Err(error) => error.as_response_error().status_code(),
    };
    span.set_attribute(KeyValue::new(HTTP_RESPONSE_STATUS_CODE, i64::from(status.as_u16())));
    if status.is_server_error() {
        // A server's 4xx is the client's error, not the span's (the conventions).
        span.set_attribute(KeyValue::new(ERROR_TYPE, status.as_str().to_owned()));
        span.set_status(Status::error(""));
    }
    span.end();
    result
}

/// An incoming request's headers, as the propagator reads them.
struct RequestHeaders<'a>(&'a RequestHeaderMap);

impl Extractor for RequestHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

/// The client spans of one Elasticsearch node (tracing on): what every span of its requests says
/// about the node, built once.
pub struct ClientTracing {
    node: [KeyValue; 3],
}

impl ClientTracing {
    pub fn new(url: &Url) -> ClientTracing {
        ClientTracing {
            node: [
                KeyValue::new(DB_SYSTEM_NAME, "elasticsearch"),
                KeyValue::new(SERVER_ADDRESS, url.host_str().unwrap_or_default().to_owned()),
                KeyValue::new(SERVER_PORT, i64::from(url.port_or_known_default().unwrap_or_default())),
            ],
        }
    }

    /// Starts the CLIENT span of one request of the endpoint `operation` (Elasticsearch's name
    /// for it, e.g. `get`, which names the span, as the official clients' instrumentations do) to
    /// the document `id` of `index`, a child of the current context's span (the server span of
    /// the request being served).
    pub fn start(&self, operation: &'static str, method: &'static str, index: &str, id: &str) -> ClientSpan {
        let tracer = global::tracer(TRACER_NAME);
        let mut attributes = Vec::with_capacity(self.node.len() + 4);
        attributes.extend_from_slice(&self.node);
        attributes.extend([
            KeyValue::new(HTTP_REQUEST_METHOD, method),
            KeyValue::new(DB_OPERATION_NAME, operation),
            KeyValue::new(DB_INDEX, index.to_owned()),
            KeyValue::new(DB_ID, id.to_owned()),
        ]);
        let span = tracer
            .span_builder(operation)
            .with_kind(SpanKind::Client)
            .with_attributes(attributes)
            .start(&tracer);
        ClientSpan(Context::current_with_span(span))
    }
}

/// The CLIENT span of one Elasticsearch request; ends when dropped.
pub struct ClientSpan(Context);

impl ClientSpan {
    /// The headers that carry this span's context to Elasticsearch, as the global propagator
    /// writes them: `traceparent` (its parent: this span), and `tracestate` if the caller sent one.
    pub fn propagation_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&self.0, &mut HeaderInjector(&mut headers));
        });
        headers
    }

    /// Elasticsearch answered with `status`.
    pub fn answered(&self, status: u16) {
        self.0
            .span()
            .set_attribute(KeyValue::new(HTTP_RESPONSE_STATUS_CODE, i64::from(status)));
    }

    /// The request failed: `error.type` is `timeout` (no answer in time) or `unavailable` (the
    /// repository's two failures; the log line has the details).
    pub fn failed(&self, error: &AppError) {
        let error_type = match error {
            AppError::Timeout => "timeout",
            _ => "unavailable",
        };
        let span = self.0.span();
        span.set_attribute(KeyValue::new(ERROR_TYPE, error_type));
        span.set_status(Status::error(error.to_string()));
    }
}

impl Drop for ClientSpan {
    fn drop(&mut self) {
        self.0.span().end();
    }
}

/// The default registry in Prometheus text format.
pub fn render_metrics() -> String {
    let mut text = Vec::new();
    TextEncoder::new()
        .encode(&prometheus::gather(), &mut text)
        .expect("text encoding cannot fail");
    String::from_utf8(text).expect("the text format is UTF-8")
}

/// A failure as a log line carries it in `error` (with its causes, as the spec asks): the error's text, then
/// the text of each cause (`source()`) that the text so far does not already contain, joined by
/// `: ` ("error sending request for url (...): client error (Connect): tcp connect error:
/// Connection refused (os error 111)": the client's error repeats its cause's text, which is
/// written once).
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Installs the JSON-lines logger at `info` (until the configuration sets its level).
pub fn init_logging() {
    // Only fails if a logger is already installed (a second call in tests): keep that one.
    if log::set_logger(&JsonLogger).is_ok() {
        log::set_max_level(LevelFilter::Info);
    }
}

/// One JSON object per line on stdout: `ts` (RFC 3339, UTC), `level`, `msg`, then the
/// record's key-values (numbers and booleans stay JSON numbers and booleans).
struct JsonLogger;

impl Log for JsonLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level() && !sdk_chatter(metadata)
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = format_line(OffsetDateTime::now_utc(), record);
            // One write per line, so lines from different workers never interleave.
            let _ = std::io::stdout().lock().write_all(&line);
        }
    }

    fn flush(&self) {
        let _ = std::io::stdout().flush();
    }
}

/// The OpenTelemetry SDK's own diagnostics (tracing on; `tracing` events forwarded to `log`) below
/// `warn`: its startup notice and its debug traffic. Its warnings and errors (a failed export) are
/// logged; nothing else it says is, so tracing adds no log line of its own while it works.
fn sdk_chatter(metadata: &Metadata<'_>) -> bool {
    metadata.level() > log::Level::Warn && metadata.target().starts_with("opentelemetry")
}

/// `ts`: RFC 3339 in UTC with milliseconds, always as wide (`2025-11-21T22:00:00.123Z`), as
/// `time` formats it. Its `Rfc3339` writes only the fraction digits a time needs (`.02`, and none
/// on a whole second), so lines would no longer sort by their text; its ISO 8601 format, whose
/// defaults are RFC 3339's profile (four-digit year, `-` and `:`, `Z` for UTC), set to three
/// fraction digits (truncated, not rounded) writes the same text at a fixed width.
const TS_FORMAT: EncodedConfig = Config::DEFAULT
    .set_time_precision(TimePrecision::Second {
        decimal_digits: NonZero::new(3),
    })
    .encode();

fn format_line(now: OffsetDateTime, record: &Record<'_>) -> Vec<u8> {
    // Cannot fail: a UTC time from the clock has a four-digit year.
    let ts = now.format(&Iso8601::<TS_FORMAT>).unwrap_or_default();
    let mut line = Vec::with_capacity(160);
    line.extend_from_slice(b"{\"ts\":");
    write_json(&mut line, &ts);
    line.extend_from_slice(b",\"level\":");
    write_json(&mut line, &record.level().as_str().to_ascii_lowercase());
    line.extend_from_slice(b",\"msg\":");
    write_json(&mut line, &record.args().to_string());
    let _ = record.key_values().visit(&mut JsonFields(&mut line));
    line.extend_from_slice(b"}\n");
    line
}

fn write_json<T: serde::Serialize + ?Sized>(line: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(line, value).expect("strings and numbers always serialise");
}

struct JsonFields<'a>(&'a mut Vec<u8>);

impl<'kvs> VisitSource<'kvs> for JsonFields<'_> {
    fn visit_pair(&mut self, key: kv::Key<'kvs>, value: kv::Value<'kvs>) -> Result<(), kv::Error> {
        self.0.push(b',');
        write_json(self.0, key.as_str());
        self.0.push(b':');
        if let Some(n) = value.to_u64() {
            write_json(self.0, &n);
        } else if let Some(n) = value.to_i64() {
            write_json(self.0, &n);
        } else if let Some(n) = value.to_f64() {
            write_json(self.0, &n);
        } else if let Some(b) = value.to_bool() {
            write_json(self.0, &b);
        } else {
            write_json(self.0, &value.to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::Level;
    use serde_json::{Value, json};

    fn line(record: &Record<'_>) -> Value {
        let now = OffsetDateTime::from_unix_timestamp_nanos(1_763_762_400_123_456_789).unwrap();
        let bytes = format_line(now, record);
        assert!(bytes.ends_with(b"}\n") && !bytes[..bytes.len() - 1].contains(&b'\n'));
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn log_line_fields_and_types() {
        let kvs: [(&str, kv::Value<'_>); 5] = [
            ("method", kv::Value::from("GET")),
            ("path", kv::Value::from("/city/v1/get?id=1&language=en")),
            ("status", kv::Value::from(200u16)),
            ("duration_ms", kv::Value::from(1.25f64)),
            ("ok", kv::Value::from(true)),
        ];
        let record = Record::builder()
            .level(Level::Info)
            .args(format_args!("request \"quoted\" Plzeň"))
            .key_values(&kvs)
            .build();
        assert_eq!(
            line(&record),
            json!({
                "ts": "2025-11-21T22:00:00.123Z", "level": "info", "msg": "request \"quoted\" Plzeň",
                "method": "GET", "path": "/city/v1/get?id=1&language=en", "status": 200,
                "duration_ms": 1.25, "ok": true
            })
        );
    }

    #[test]
    fn timestamps_have_a_fixed_width() {
        let record = Record::builder().level(Level::Info).args(format_args!("x")).build();
        let ts = |nanos| {
            let now = OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap();
            let line: Value = serde_json::from_slice(&format_line(now, &record)).unwrap();
            line["ts"].as_str().unwrap().to_owned()
        };
        assert_eq!(ts(1_763_762_400_020_000_000), "2025-11-21T22:00:00.020Z");
        assert_eq!(ts(1_763_762_400_000_000_000), "2025-11-21T22:00:00.000Z");
        assert_eq!(ts(1_763_762_400_999_999_999), "2025-11-21T22:00:00.999Z"); // truncated
        // Where RFC 3339's shortest form has three fraction digits, it is the same text.
        let now = OffsetDateTime::from_unix_timestamp_nanos(1_763_762_400_123_000_000).unwrap();
        let rfc3339 = now.format(&time::format_description::well_known::Rfc3339).unwrap();
        assert_eq!(ts(1_763_762_400_123_456_789), rfc3339);
    }

    /// The spec's rule: the error's text, then each cause's text that the text so far does not
    /// already contain, joined by `: `.
    #[test]
    fn failures_are_described_with_each_new_cause_once() {
        #[derive(Debug)]
        struct Failure(&'static str, Option<Box<Failure>>);
        impl std::fmt::Display for Failure {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Failure {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|cause| cause as _)
            }
        }
        let chain = |texts: &[&'static str]| {
            texts
                .iter()
                .rev()
                .fold(None, |cause, text| Some(Box::new(Failure(text, cause))))
                .unwrap()
        };
        for (texts, want) in [
            (&["refused"][..], "refused"),
            (&["error sending request", "refused"], "error sending request: refused"),
            // The client's error repeats its cause's text: written once.
            (
                &[
                    "error sending request for url (x)",
                    "error sending request for url (x)",
                    "refused",
                ],
                "error sending request for url (x): refused",
            ),
            // A cause an earlier text already contains, even when it is not the one just before.
            (
                &[
                    "request failed: tcp connect error",
                    "client error (Connect)",
                    "tcp connect error",
                ],
                "request failed: tcp connect error: client error (Connect)",
            ),
            (&["a", "b", "a", "c"], "a: b: c"),
        ] {
            assert_eq!(describe(&*chain(texts)), want, "{texts:?}");
        }
    }

    #[test]
    fn only_the_sdks_warnings_and_errors_are_logged() {
        let metadata = |level, target| Metadata::builder().level(level).target(target).build();
        for target in ["opentelemetry", "opentelemetry_sdk", "opentelemetry-otlp"] {
            assert!(sdk_chatter(&metadata(Level::Info, target)));
            assert!(sdk_chatter(&metadata(Level::Debug, target)));
            assert!(!sdk_chatter(&metadata(Level::Warn, target)));
            assert!(!sdk_chatter(&metadata(Level::Error, target)));
        }
        assert!(!sdk_chatter(&metadata(Level::Info, "cityref_rust_actix")));
        assert!(!sdk_chatter(&metadata(Level::Debug, "reqwest::connect")));
    }

    #[test]
    fn levels_are_lower_case() {
        let record = Record::builder().level(Level::Warn).args(format_args!("x")).build();
        assert_eq!(line(&record)["level"], "warn");
    }

    #[test]
    fn histogram_has_the_contract_buckets() {
        REQUEST_DURATION
            .with_label_values(&["GET", "/health", "200"])
            .observe(0.003);
        let text = render_metrics();
        assert!(text.contains("# TYPE http_server_request_duration_seconds histogram"));
        for le in ["0.005", "0.075", "2.5", "7.5", "10", "+Inf"] {
            let bucket = format!(
                "http_server_request_duration_seconds_bucket{{http_request_method=\"GET\",http_response_status_code=\"200\",http_route=\"/health\",le=\"{le}\"}}"
            );
            assert!(text.contains(&bucket), "{bucket} in\n{text}");
        }
    }

    #[test]
    fn method_labels() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        assert_eq!(method_label(&Method::from_bytes(b"PROPFIND").unwrap()), "_OTHER");
        assert_eq!(method_label(&Method::from_bytes(b"get").unwrap()), "_OTHER");
    }
}
