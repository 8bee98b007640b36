//! Tracing on: the SDK's in-memory exporter behind `telemetry::tracing_layer` (the layer `main`
//! installs with the OTLP exporter) as the global subscriber, and the W3C propagator, installed
//! once for this test binary; each test reads the spans of its own trace ids.

mod common;

use std::sync::LazyLock;
use std::time::Duration;

use actix_web::http::{Method, StatusCode};
use actix_web::test::{TestRequest, call_service, init_service};
use cityref_rust_actix::telemetry;
use cityref_rust_actix::transport::{self, app};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry::{Key, Value, global};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

static SPANS: LazyLock<InMemorySpanExporter> = LazyLock::new(|| {
    let exporter = InMemorySpanExporter::default();
    // The simple processor exports each span as it ends: nothing to wait for.
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    global::set_text_map_propagator(TraceContextPropagator::new());
    tracing_subscriber::registry()
        .with(telemetry::tracing_layer(&provider))
        .init();
    exporter
});

/// One request to the app as `main` builds it (and its Elasticsearch stand-in), with
/// `traceparent` if given: its status, and the `traceparent` of each Elasticsearch request it made.
async fn traced_call(method: &str, uri: &str, traceparent: Option<&str>) -> (StatusCode, Vec<Option<String>>) {
    LazyLock::force(&SPANS);
    let (url, heads) = common::brno();
    let app = init_service(app(common::service(&url, Duration::from_secs(2)))).await;
    let mut request = TestRequest::default()
        .method(Method::from_bytes(method.as_bytes()).unwrap())
        .uri(uri);
    if let Some(traceparent) = traceparent {
        request = request.insert_header(("traceparent", traceparent));
    }
    let status = call_service(&app, request.to_request()).await.status();
    (status, common::traceparents(&heads))
}

fn spans_of(trace_id: TraceId) -> Vec<SpanData> {
    let spans = SPANS.get_finished_spans().unwrap();
    spans
        .into_iter()
        .filter(|span| span.span_context.trace_id() == trace_id)
        .collect()
}

fn attribute(span: &SpanData, key: &'static str) -> Option<Value> {
    let key = Key::from_static_str(key);
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| kv.value.clone())
}

fn string(value: &str) -> Option<Value> {
    Some(Value::from(value.to_owned()))
}

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn caller(trace_id: &str, flags: &str) -> String {
    format!("00-{trace_id}-{CALLER_SPAN}-{flags}")
}

/// A sampled caller: one SERVER span, its child, named by the route with the HTTP
/// attributes; one CLIENT span per Elasticsearch request (the city, then its region), the
/// server span's children; each request's `traceparent` is its client span's context.
#[actix_web::test]
async fn server_span_client_spans_and_traceparent() {
    let (status, sent) = traced_call(
        "GET",
        "/city/v1/get?id=3&language=en",
        Some(&caller(CALLER_TRACE, "01")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let trace_id = TraceId::from_hex(CALLER_TRACE).unwrap();
    let spans = spans_of(trace_id);
    let servers: Vec<&SpanData> = spans.iter().filter(|s| s.span_kind == SpanKind::Server).collect();
    assert_eq!(servers.len(), 1, "{spans:#?}");
    let server = servers[0];
    assert_eq!(server.name, "GET /city/v1/get");
    assert_eq!(server.parent_span_id, SpanId::from_hex(CALLER_SPAN).unwrap());
    assert!(server.parent_span_is_remote);
    assert_eq!(attribute(server, "http.request.method"), string("GET"));
    assert_eq!(attribute(server, "http.route"), string("/city/v1/get"));
    assert_eq!(attribute(server, "http.response.status_code"), Some(Value::I64(200)));
    assert_eq!(server.status, Status::Unset);

    let clients: Vec<&SpanData> = spans.iter().filter(|s| s.span_kind == SpanKind::Client).collect();
    assert_eq!(clients.len(), 2, "{spans:#?}");
    assert_eq!(spans.len(), 3, "{spans:#?}");
    for (client, index) in clients.iter().zip(["city", "region"]) {
        assert_eq!(client.name, "get");
        assert_eq!(client.parent_span_id, server.span_context.span_id());
        assert_eq!(attribute(client, "http.request.method"), string("GET"));
        assert_eq!(attribute(client, "http.response.status_code"), Some(Value::I64(200)));
        assert_eq!(attribute(client, "db.system.name"), string("elasticsearch"));
        assert_eq!(attribute(client, "db.elasticsearch.path_parts.index"), string(index));
        assert_eq!(attribute(client, "server.address"), string("127.0.0.1"));
    }
    let want: Vec<Option<String>> = clients
        .iter()
        .map(|client| Some(format!("00-{CALLER_TRACE}-{}-01", client.span_context.span_id())))
        .collect();
    assert_eq!(sent, want);
}

/// No caller context: the server span starts a trace, and Elasticsearch gets it.
#[actix_web::test]
async fn new_trace_without_a_caller() {
    let (status, sent) = traced_call("GET", "/city/v1/get?id=3&language=en", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sent.len(), 2);
    let first = sent[0].as_deref().expect("a traceparent");
    let trace_id = TraceId::from_hex(&first[3..35]).unwrap();
    let spans = spans_of(trace_id);
    let server = spans
        .iter()
        .find(|s| s.span_kind == SpanKind::Server)
        .expect("a server span");
    assert_eq!(server.parent_span_id, SpanId::INVALID);
    assert_eq!(spans.iter().filter(|s| s.span_kind == SpanKind::Client).count(), 2);
    assert!(
        sent.iter()
            .all(|tp| tp.as_deref().is_some_and(|tp| tp.contains(&format!("-{trace_id}-"))))
    );
}

/// The span's name and route: the listed path the request matched (also for its 405 and
/// 414), else the bare method and no `http.route` (an unknown path); `HTTP` and `_OTHER`
/// for a method the conventions do not list.
#[actix_web::test]
async fn span_names_and_routes() {
    for (i, (method, uri, status, name, route)) in [
        ("GET", "/nope", 404, "GET", None),
        ("GET", "/h%65alth", 404, "GET", None),
        ("PUT", "/health", 405, "PUT /health", Some("/health")),
        ("FOO", "/health", 405, "HTTP /health", Some("/health")),
        ("GET", "/health", 200, "GET /health", Some("/health")),
        ("HEAD", "/metrics", 200, "HEAD /metrics", Some("/metrics")),
        (
            "GET",
            "/city/v1/get?id=0",
            400,
            "GET /city/v1/get",
            Some("/city/v1/get"),
        ),
        // A 414 is answered before routing; actix-web's `match_pattern` still finds a listed
        // path in its resource map (as for the histogram's label).
        (
            "GET",
            &format!("/health?{}", "x".repeat(transport::MAX_REQUEST_TARGET)),
            414,
            "GET /health",
            Some("/health"),
        ),
        (
            "GET",
            &format!("/{}", "x".repeat(transport::MAX_REQUEST_TARGET)),
            414,
            "GET",
            None,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let trace = format!("{:032x}", 0xa000 + i);
        let (answered, _) = traced_call(method, uri, Some(&caller(&trace, "01"))).await;
        assert_eq!(answered.as_u16(), status, "{method} {uri}");
        let spans = spans_of(TraceId::from_hex(&trace).unwrap());
        assert_eq!(spans.len(), 1, "{method} {uri}: {spans:#?}");
        let span = &spans[0];
        assert_eq!(
            (span.span_kind.clone(), &*span.name),
            (SpanKind::Server, name),
            "{method} {uri}"
        );
        assert_eq!(
            attribute(span, "http.route"),
            route.map(|r| Value::from(r.to_owned())),
            "{method} {uri}"
        );
        assert_eq!(
            attribute(span, "http.response.status_code"),
            Some(Value::I64(status.into()))
        );
        let want_method = if method == "FOO" { "_OTHER" } else { method };
        assert_eq!(attribute(span, "http.request.method"), string(want_method));
    }
}

/// A caller that did not sample: nothing is exported, but Elasticsearch still gets its
/// trace id, flagged not sampled.
#[actix_web::test]
async fn unsampled_caller_propagates_and_exports_nothing() {
    let trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    let (status, sent) = traced_call("GET", "/city/v1/get?id=3&language=en", Some(&caller(trace, "00"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sent.len(), 2);
    for traceparent in sent {
        let traceparent = traceparent.expect("a traceparent");
        assert!(traceparent.starts_with(&format!("00-{trace}-")), "{traceparent}");
        assert!(traceparent.ends_with("-00"), "{traceparent}");
    }
    assert!(spans_of(TraceId::from_hex(trace).unwrap()).is_empty());
}

/// An Elasticsearch request that fails is a failed client span; the server span of the
/// 503 is failed too.
#[actix_web::test]
async fn failures_are_span_errors() {
    LazyLock::force(&SPANS);
    let service = init_service(app(common::nowhere())).await;
    let trace = "7bf92f3577b34da6a3ce929d0e0e4736";
    let request = TestRequest::get()
        .uri("/city/v1/get?id=3&language=en")
        .insert_header(("traceparent", caller(trace, "01")))
        .to_request();
    assert_eq!(
        call_service(&service, request).await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    let spans = spans_of(TraceId::from_hex(trace).unwrap());
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let client = spans.iter().find(|s| s.span_kind == SpanKind::Client).unwrap();
    assert_eq!(attribute(client, "error.type"), string("unavailable"));
    assert!(matches!(client.status, Status::Error { .. }));
    assert_eq!(attribute(client, "http.response.status_code"), None);
    let server = spans.iter().find(|s| s.span_kind == SpanKind::Server).unwrap();
    assert_eq!(attribute(server, "error.type"), string("503"));
    assert!(matches!(server.status, Status::Error { .. }));

    // No answer within the timeout: the client span ends as a timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap(); // never accepts
    let url = elasticsearch::http::Url::parse(&format!("http://{}", silent.local_addr().unwrap())).unwrap();
    let service = init_service(app(common::service(&url, Duration::from_millis(300)))).await;
    let trace = "8bf92f3577b34da6a3ce929d0e0e4736";
    let request = TestRequest::get()
        .uri("/city/v1/get?id=3&language=en")
        .insert_header(("traceparent", caller(trace, "01")))
        .to_request();
    assert_eq!(
        call_service(&service, request).await.status(),
        StatusCode::GATEWAY_TIMEOUT
    );
    let spans = spans_of(TraceId::from_hex(trace).unwrap());
    let client = spans.iter().find(|s| s.span_kind == SpanKind::Client).unwrap();
    assert_eq!(attribute(client, "error.type"), string("timeout"));
}
