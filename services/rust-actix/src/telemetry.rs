//! Observability on the ecosystem's crates: `tracing` events written as JSON lines by
//! `tracing-subscriber`, the request span and request log line of `tracing-actix-web`'s
//! `TracingLogger` (its `RootSpanBuilder` is ours), the request histogram of `actix-web-prom`, and
//! tracing (on with `OTEL_TRACES_EXPORTER=otlp`): the OpenTelemetry SDK behind
//! `tracing-opentelemetry`, and the client span of an Elasticsearch request.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::HeaderMap as RequestHeaderMap;
use actix_web_prom::{PrometheusMetrics, PrometheusMetricsBuilder};
use elasticsearch::http::headers::HeaderMap;
use opentelemetry::global;
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::HeaderInjector;
use opentelemetry_otlp::{ExporterBuildError, Protocol, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prometheus::{Encoder, TextEncoder};
use tracing::field::Empty;
use tracing::{Span, Subscriber};
use tracing_actix_web::RootSpanBuilder;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};

use crate::errors::AppError;

/// `Content-Type` of `/metrics` (Prometheus text exposition format 0.0.4).
pub const METRICS_CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// The spec's buckets (OpenTelemetry's defaults for `http.server.request.duration`).
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// actix-web-prom's middleware, registered once in Prometheus' default registry (which
/// `/metrics` renders): its `http_requests_duration_seconds` histogram (labels `endpoint`,
/// `method`, `status`) and `http_requests_total` counter, with the spec's buckets; a request that
/// matched no listed path is labelled `endpoint=""` (its `mask_unmatched_patterns`), not its path.
static METRICS: LazyLock<PrometheusMetrics> = LazyLock::new(|| {
    PrometheusMetricsBuilder::new("")
        .registry(prometheus::default_registry().clone())
        .buckets(&BUCKETS)
        .mask_unmatched_patterns("")
        .build()
        .expect("registered once")
});

/// The request-metrics middleware (a clone of the one instance).
pub fn metrics() -> PrometheusMetrics {
    METRICS.clone()
}

/// The default registry in Prometheus text format.
pub fn render_metrics() -> String {
    let mut text = Vec::new();
    TextEncoder::new()
        .encode(&prometheus::gather(), &mut text)
        .expect("text encoding cannot fail");
    String::from_utf8(text).expect("the text format is UTF-8")
}

/// The instrumentation scope of this service's spans, and the target of its own events and spans.
const TRACER_NAME: &str = env!("CARGO_CRATE_NAME");
/// The longest wait for the last spans' export at shutdown: the spec's 15 s from the stop signal
/// minus the server's 10 s for requests in flight, with a second to spare.
const TRACING_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(4);

/// Installs the JSON-lines logger (`tracing-subscriber`'s `json` format on stdout) at `level`,
/// `log` records of dependencies included (`tracing-log`), and with `tracer` (tracing on) the
/// OpenTelemetry layer. The SDK's own diagnostics (`opentelemetry*` targets) are written from
/// `warn` up only, so a working tracer adds no line.
pub fn init(level: LevelFilter, tracer: Option<&SdkTracerProvider>) {
    let sdk = level.min(LevelFilter::WARN);
    let logs = tracing_subscriber::fmt::layer()
        .json()
        .with_filter(Targets::new().with_default(level).with_target("opentelemetry", sdk));
    // Only fails if a subscriber is already installed (a second call in tests): keep that one.
    let _ = tracing_subscriber::registry()
        .with(logs)
        .with(tracer.map(tracing_layer))
        .try_init();
}

/// The spans of this crate (the server span and the Elasticsearch client spans) as OpenTelemetry
/// spans of `provider`.
pub fn tracing_layer<S>(provider: &SdkTracerProvider) -> impl Layer<S> + use<S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(TRACER_NAME))
        .with_filter(Targets::new().with_target(TRACER_NAME, LevelFilter::INFO))
}

/// Tracing on (`OTEL_TRACES_EXPORTER=otlp`): the OTLP span exporter (http/protobuf, over reqwest's
/// blocking client) behind the SDK's batch span processor, and the W3C trace-context propagator
/// as OpenTelemetry's global. The SDK reads its standard variables itself (`OTEL_EXPORTER_OTLP_*`,
/// `OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`).
pub fn init_tracing() -> Result<SdkTracerProvider, ExporterBuildError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()?;
    global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(SdkTracerProvider::builder().with_batch_exporter(exporter).build())
}

/// Exports the spans still queued and stops the exporter, within [`TRACING_SHUTDOWN_TIMEOUT`].
pub fn shutdown_tracing(provider: &SdkTracerProvider) -> OTelSdkResult {
    provider.shutdown_with_timeout(TRACING_SHUTDOWN_TIMEOUT)
}

/// The methods OpenTelemetry names (RFC 9110's and PATCH); any other is `_OTHER`.
const KNOWN_METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// When `TracingLogger` started on the request (for the request line's duration).
struct Started(Instant);

/// `TracingLogger`'s root span and request line. The span (kind SERVER) is the child of the
/// caller's `traceparent`, as the global propagator reads it (none when tracing is off), named
/// `<method> <route>` with `http.route` where a listed path matched (`match_pattern`, the same as
/// the histogram's `endpoint`), else the bare method; `http.request.method` and
/// `http.response.status_code` as OpenTelemetry's stable HTTP conventions say (`_OTHER` and the
/// name `HTTP` for a method they do not list); 5xx answers set `error.type` and the error
/// status. Not `tracing_actix_web::root_span!`: its span has `http.route = "default"` where no
/// route matched and the older conventions' `http.method`/`http.status_code`.
pub struct ServerSpan;

impl RootSpanBuilder for ServerSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        request.extensions_mut().insert(Started(Instant::now()));
        // Before routing, `match_pattern` matches the path against the resource map: the route
        // routing will match (the span's name is fixed once the SDK has started it).
        let route = request.match_pattern();
        let method = KNOWN_METHODS
            .into_iter()
            .find(|known| *known == request.method().as_str());
        let name = match &route {
            Some(route) => format!("{} {route}", method.unwrap_or("HTTP")),
            None => method.unwrap_or("HTTP").to_owned(),
        };
        let span = tracing::info_span!(
            "HTTP request",
            otel.kind = "server",
            otel.name = name.as_str(),
            http.request.method = method.unwrap_or("_OTHER"),
            http.request.method_original = method.is_none().then(|| request.method().as_str()),
            http.route = route.as_deref(),
            http.response.status_code = Empty,
            "error.type" = Empty,
            otel.status_code = Empty,
        );
        let parent =
            global::get_text_map_propagator(|propagator| propagator.extract(&RequestHeaders(request.headers())));
        // Fails only without the OpenTelemetry layer (tracing off): nothing to parent.
        let _ = span.set_parent(parent);
        span
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, actix_web::Error>) {
        let response = match outcome {
            Ok(response) => response,
            Err(error) => return record_status(&span, error.as_response_error().status_code().as_u16()),
        };
        let status = response.status().as_u16();
        record_status(&span, status);
        let request = response.request();
        let elapsed = request.extensions().get::<Started>().map(|started| started.0.elapsed());
        tracing::info!(
            method = request.method().as_str(),
            path = request.uri().path_and_query().map_or("", |target| target.as_str()),
            status,
            duration_ms = elapsed.unwrap_or_default().as_secs_f64() * 1000.0,
            "request"
        );
    }
}

fn record_status(span: &Span, status: u16) {
    span.record("http.response.status_code", i64::from(status));
    if status >= 500 {
        // A server's 4xx is the client's error, not the span's (the conventions).
        span.record("error.type", status.to_string().as_str());
        span.record("otel.status_code", "ERROR");
    }
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

/// The CLIENT span of one request of Elasticsearch's endpoint `get` (which names the span, as the
/// official clients' instrumentations do) to the document `id` of `index` at `host:port`, a child
/// of the current span (the request's server span).
pub fn client_span(index: &str, id: &str, host: &str, port: u16) -> Span {
    tracing::info_span!(
        "get",
        otel.kind = "client",
        db.system.name = "elasticsearch",
        db.operation.name = "get",
        db.elasticsearch.path_parts.index = index,
        db.elasticsearch.path_parts.id = id,
        http.request.method = "GET",
        server.address = host,
        server.port = i64::from(port),
        http.response.status_code = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// The headers that carry `span`'s context to Elasticsearch, as the global propagator writes them
/// (`traceparent`, and `tracestate` if the caller sent one); none when tracing is off.
pub fn propagation_headers(span: &Span) -> HeaderMap {
    let mut headers = HeaderMap::new();
    global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&span.context(), &mut HeaderInjector(&mut headers));
    });
    headers
}

/// The client span's request failed: `error.type` is `timeout` (no answer in time) or
/// `unavailable` (the repository's two failures; the log line has the details).
pub fn client_failed(span: &Span, error: &AppError) {
    let error_type = if *error == AppError::Timeout {
        "timeout"
    } else {
        "unavailable"
    };
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", error.to_string().as_str());
}

/// A failure as a log line carries it in `error` (with its causes, as the spec asks): the error's
/// text, then the text of each cause (`source()`) that the text so far does not already contain,
/// joined by `: ` (the Elasticsearch client's error repeats its reqwest cause's text, written
/// once). `tracing`'s `Value` for an error records its `Display` only.
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
