//! cityref city service on actix-web: startup, the server, and shutdown.
//! The contract is `spec/openapi.yaml`; see README.md for the design.

mod config;
mod errors;
mod models;
mod query;
mod repository;
mod service;
mod telemetry;
mod transport;

use std::num::NonZero;
use std::process::ExitCode;
use std::time::Duration;

use actix_web::HttpServer;
use log::{error, info, warn};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::config::{Config, redact};
use crate::repository::{CityRepository, Shared};
use crate::service::CityService;
use crate::telemetry::{describe, init_tracing, shutdown_tracing};
use crate::transport::app;

/// The startup check gives up after this, whatever `ELASTICSEARCH_TIMEOUT_MS` says, so a
/// failing start ends well within 15 s.
const STARTUP_CHECK_LIMIT: Duration = Duration::from_secs(10);
/// In-flight requests get this long after SIGTERM/SIGINT (the contract allows 15 s in all).
const SHUTDOWN_TIMEOUT_SECS: u64 = 10;
/// The health check mode's answer must come within this (the spec's 2 s).
const HEALTHCHECK_TIMEOUT: Duration = Duration::from_secs(2);

#[actix_web::main]
async fn main() -> ExitCode {
    if std::env::args().skip(1).eq(["healthcheck"]) {
        return healthcheck(healthcheck_port(std::env::var("PORT").ok())).await;
    }
    telemetry::init_logging();
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(e) => {
            error!(variable = e.variable, error = describe(&e).as_str(); "invalid configuration");
            return ExitCode::FAILURE;
        }
    };
    log::set_max_level(config.log_level);
    // Tracing off: no tracer provider, no propagator, no middleware, nothing more to log.
    let tracer_provider = if config.tracing {
        match init_tracing() {
            Ok(provider) => Some(provider),
            Err(e) => {
                error!(error = describe(&e).as_str(); "cannot set up tracing");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };

    let url = redact(&config.elasticsearch_url);
    let new_repository = {
        let (es_url, timeout, shared, traced) = (
            config.elasticsearch_url.clone(),
            config.elasticsearch_timeout,
            Shared::default(),
            config.tracing,
        );
        move || CityRepository::new(&es_url, timeout, shared.clone(), traced)
    };
    let repository = match new_repository() {
        Ok(repository) => repository,
        Err(e) => {
            error!(url = url.as_str(), error = describe(&e).as_str(); "cannot create an Elasticsearch client for {url}");
            return ExitCode::FAILURE;
        }
    };
    let limit = config.elasticsearch_timeout.min(STARTUP_CHECK_LIMIT);
    match tokio::time::timeout(limit, repository.check_health()).await {
        Ok(Ok(())) => info!(url = url.as_str(); "Elasticsearch at {url} is reachable"),
        Ok(Err(reason)) => {
            error!(url = url.as_str(), error = reason.as_str(); "Elasticsearch at {url} is not reachable");
            return ExitCode::FAILURE;
        }
        Err(_) => {
            let reason = format!("no answer within {} ms", limit.as_millis());
            error!(url = url.as_str(), error = reason.as_str(); "Elasticsearch at {url} is not reachable");
            return ExitCode::FAILURE;
        }
    }

    // Registered before serving, so an early signal never meets the default (fatal) action.
    let (Ok(terminate), Ok(interrupt)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        error!("cannot install the SIGTERM/SIGINT handlers");
        return ExitCode::FAILURE;
    };
    // actix's default worker count; std honours the cgroup (v1 and v2) CPU quota: 1 worker
    // under a 1-CPU quota.
    let workers = std::thread::available_parallelism().map_or(2, NonZero::get);
    // Each worker gets its own client (connection pool) on its own runtime; the region cache is
    // shared. Creating a client succeeded once above, so it cannot fail here.
    let traced = config.tracing;
    let server = HttpServer::new(move || {
        app(
            CityService::new(new_repository().expect("Elasticsearch client")),
            traced,
        )
    })
    .shutdown_signal(stop_signal(terminate, interrupt)) // graceful; replaces actix's handlers
    .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
    .bind(("0.0.0.0", config.port));
    let server = match server {
        Ok(server) => server.run(),
        Err(e) => {
            error!(port = config.port, error = describe(&e).as_str(); "cannot listen on port {}", config.port);
            return ExitCode::FAILURE;
        }
    };
    info!(port = config.port, workers = workers; "listening on port {}", config.port);
    let exit = match server.await {
        Ok(()) => {
            info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            error!(error = describe(&e).as_str(); "server failed");
            ExitCode::FAILURE
        }
    };
    // The spans of the last requests are exported before the process ends.
    if let Some(provider) = tracer_provider
        && let Err(e) = shutdown_tracing(&provider)
    {
        warn!(error = describe(&e).as_str(); "tracing: the last spans were not exported");
    }
    exit
}

/// Resolves on SIGTERM or SIGINT: the server then stops accepting, lets in-flight requests
/// finish (up to `SHUTDOWN_TIMEOUT_SECS`), and `main` returns 0. (actix's own handlers would
/// stop at once on SIGINT.)
async fn stop_signal(mut terminate: Signal, mut interrupt: Signal) {
    let name = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    };
    info!(signal = name; "{name} received; stopping gracefully");
}

/// The health check mode's port: `PORT`, or 8080 when it is unset or not a valid port.
fn healthcheck_port(port: Option<String>) -> u16 {
    port.and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p > 0)
        .unwrap_or(8080)
}

/// The spec's health check mode: `GET /health` on 127.0.0.1:`port`, exit 0 for a 200 within 2 s,
/// else 1. For `HEALTHCHECK` in an image with no shell or curl. The request is reqwest's, the HTTP
/// client the Elasticsearch client already brings; the 2 s cap is its total request timeout
/// (connect, send, the answer's head).
async fn healthcheck(port: u16) -> ExitCode {
    let client = reqwest::Client::builder()
        .timeout(HEALTHCHECK_TIMEOUT)
        .no_proxy() // 127.0.0.1 directly, whatever HTTP_PROXY says
        .build();
    let answered_200 = match client {
        Ok(client) => client
            .get(format!("http://127.0.0.1:{port}/health"))
            .send()
            .await
            .is_ok_and(|response| response.status() == reqwest::StatusCode::OK),
        Err(_) => false,
    };
    if answered_200 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ROUTES;
    use actix_web::http::{Method, StatusCode, header};
    use actix_web::test::{TestRequest, call_service, init_service, read_body};

    struct Answer {
        status: StatusCode,
        content_type: Option<String>,
        allow: Option<String>,
        body: String,
    }

    fn nowhere() -> CityService {
        let nowhere = elasticsearch::http::Url::parse("http://127.0.0.1:1").unwrap();
        CityService::new(CityRepository::new(&nowhere, Duration::from_millis(500), Shared::default(), false).unwrap())
    }

    /// One request to the app as `main` builds it, with a backend nobody listens on.
    async fn call(method: &str, uri: &str) -> Answer {
        let app = init_service(app(nowhere(), false)).await;
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let res = call_service(&app, TestRequest::default().method(method).uri(uri).to_request()).await;
        let header = |name| res.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        let (content_type, allow) = (header(header::CONTENT_TYPE), header(header::ALLOW));
        let status = res.status();
        let body = read_body(res).await;
        Answer {
            status,
            content_type,
            allow,
            body: String::from_utf8(body.to_vec()).unwrap(),
        }
    }

    const NOT_FOUND: &str = r#"{"message":"Not Found: no such resource."}"#;

    #[actix_web::test]
    async fn health_and_api_docs() {
        let health = call("GET", "/health").await;
        assert_eq!(
            (health.status, health.body.as_str()),
            (StatusCode::OK, r#"{"status":"UP"}"#)
        );
        assert_eq!(health.content_type.as_deref(), Some("application/json"));
        let docs = call("GET", "/api-docs").await;
        assert_eq!(docs.status, StatusCode::OK);
        assert_eq!(docs.content_type.as_deref(), Some("application/json"));
        assert_eq!(docs.body.as_bytes(), include_bytes!("../../../spec/openapi.json"));
        let metrics = call("GET", "/metrics").await;
        assert_eq!(metrics.status, StatusCode::OK);
        assert!(metrics.content_type.unwrap().starts_with("text/plain"));
    }

    #[actix_web::test]
    async fn unknown_paths_are_json_404_for_any_method() {
        for method in ["GET", "HEAD", "POST", "DELETE", "PROPFIND"] {
            for path in [
                "/",
                "/nope",
                "/health/",
                "/Health",
                "/HEALTH",
                "/city/v1/get/",
                "/City/v1/get",
                "/city/v1/./get",
                "/city//v1/get",
                "/h%65alth",
                "/api-docs.json",
                "/metrics/x",
                "/health?x=/health",
            ] {
                let answer = call(method, path).await;
                if path.starts_with("/health?") {
                    assert_eq!(
                        answer.status,
                        if method == "GET" || method == "HEAD" {
                            StatusCode::OK
                        } else {
                            StatusCode::METHOD_NOT_ALLOWED
                        }
                    );
                    continue;
                }
                assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {path}");
                assert_eq!(answer.content_type.as_deref(), Some("application/json"));
                assert_eq!(answer.body, NOT_FOUND, "{method} {path}");
            }
        }
    }

    #[actix_web::test]
    async fn other_methods_on_listed_paths_are_405() {
        for path in ROUTES {
            for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "get", "FOO"] {
                let answer = call(method, &format!("{path}?id=1&language=en")).await;
                assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
                assert_eq!(answer.allow.as_deref(), Some("GET, HEAD"));
                assert_eq!(answer.content_type.as_deref(), Some("application/json"));
                assert_eq!(answer.body, r#"{"message":"Method Not Allowed: use GET."}"#);
            }
        }
        // The method is checked before the parameters.
        assert_eq!(
            call("POST", "/city/v1/get").await.status,
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    #[actix_web::test]
    async fn head_is_get_without_the_body() {
        // (actix-http drops a HEAD's body when it writes the answer and keeps its Content-Length;
        // here the body is still attached, so compare headers and status.)
        for uri in ["/health", "/api-docs", "/nope", "/city/v1/get?id=0"] {
            let (get, head) = (call("GET", uri).await, call("HEAD", uri).await);
            assert_eq!(
                (get.status, get.content_type),
                (head.status, head.content_type),
                "{uri}"
            );
            assert_eq!(get.body.len(), head.body.len());
        }
    }

    #[actix_web::test]
    async fn parameter_problems_are_400_without_a_backend() {
        let answer = call("GET", "/city/v1/get?id=01e3&language=EN&language=de").await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            answer.body,
            r#"{"message":"Bad Request: parameter 'id' must be an integer from 1 to 9223372036854775807; parameter 'language' is given more than once"}"#
        );
    }

    #[actix_web::test]
    async fn unreachable_backend_is_503() {
        let answer = call("GET", "/city/v1/get?id=1&language=en").await;
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            answer.body,
            r#"{"message":"Service Unavailable: search backend unavailable."}"#
        );
    }

    #[actix_web::test]
    async fn long_request_targets_are_414_before_anything_else() {
        const TOO_LONG: &str = r#"{"message":"URI Too Long: request target exceeds 8192 bytes."}"#;
        assert!(TOO_LONG.contains(&format!(" {} bytes", transport::MAX_REQUEST_TARGET)));
        let fits = format!("/health?x={}", "a".repeat(8192 - "/health?x=".len()));
        assert_eq!(call("GET", &fits).await.status, StatusCode::OK);
        let over = format!("{fits}a");
        for (method, uri) in [
            ("GET", over.clone()),
            ("POST", over.clone()),
            ("GET", format!("/{}", "x".repeat(8192))),
            (
                "DELETE",
                format!("/city/v1/get?id=1&language=en&pad={}", "p".repeat(32 * 1024)),
            ),
        ] {
            let answer = call(method, &uri).await;
            assert_eq!(answer.status, StatusCode::URI_TOO_LONG, "{method} {}", uri.len());
            assert_eq!(answer.content_type.as_deref(), Some("application/json"));
            assert_eq!(answer.body, TOO_LONG);
        }
    }

    #[actix_web::test]
    async fn requests_are_counted_with_route_labels() {
        call("GET", "/health").await;
        call("PUT", "/health").await;
        call("GET", "/no/such/path").await;
        call("GET", &format!("/health?{}", "x".repeat(transport::MAX_REQUEST_TARGET))).await;
        call("GET", &format!("/{}", "x".repeat(transport::MAX_REQUEST_TARGET))).await;
        let metrics = call("GET", "/metrics").await.body;
        for labels in [
            r#"http_request_method="GET",http_response_status_code="200",http_route="/health""#,
            r#"http_request_method="PUT",http_response_status_code="405",http_route="/health""#,
            r#"http_request_method="GET",http_response_status_code="404",http_route="""#,
            // A 414 is answered before routing, but `match_pattern` still finds a listed path in
            // the resource map: the listed path, else empty.
            r#"http_request_method="GET",http_response_status_code="414",http_route="/health""#,
            r#"http_request_method="GET",http_response_status_code="414",http_route="""#,
        ] {
            assert!(
                metrics.contains(&format!("http_server_request_duration_seconds_count{{{labels}}}")),
                "{labels}\n{metrics}"
            );
        }
    }

    #[test]
    fn healthcheck_port_is_8080_unless_port_is_valid() {
        assert_eq!(healthcheck_port(None), 8080);
        for invalid in ["", "0", "65536", "-1", "8o", "99999999999"] {
            assert_eq!(healthcheck_port(Some(invalid.into())), 8080, "{invalid}");
        }
        assert_eq!(healthcheck_port(Some("8081".into())), 8081);
    }

    /// The health check mode against the app on actix-web's `HttpServer` (0), against a port
    /// nobody listens on, a server answering 503, and one that never answers (1, after 2 s).
    #[actix_web::test]
    async fn healthcheck_mode() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = serve_on(listener);
        assert_eq!(healthcheck(port).await, ExitCode::SUCCESS);
        handle.stop(false).await;
        assert_eq!(healthcheck(port).await, ExitCode::FAILURE);

        let unavailable = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = unavailable.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut stream, _) = unavailable.accept().unwrap();
            let _ = stream.read(&mut [0; 4096]);
            let _ = stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n");
        });
        assert_eq!(healthcheck(port).await, ExitCode::FAILURE);

        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap(); // never accepts
        let started = std::time::Instant::now();
        assert_eq!(
            healthcheck(silent.local_addr().unwrap().port()).await,
            ExitCode::FAILURE
        );
        let waited = started.elapsed();
        assert!(
            waited >= HEALTHCHECK_TIMEOUT && waited < Duration::from_secs(3),
            "{waited:?}"
        );
    }

    /// Tracing: the SDK's in-memory exporter behind the global tracer provider and the W3C
    /// propagator, installed once for the whole test process (as `main` installs the OTLP
    /// exporter). Only the apps and repositories built with tracing on make spans, so the other
    /// tests are not affected; each test reads the spans of its own trace ids.
    mod tracing {
        use super::*;
        use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
        use opentelemetry::{Key, Value};
        use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
        use std::io::{Read, Write};
        use std::sync::{Arc, LazyLock, Mutex};

        static SPANS: LazyLock<InMemorySpanExporter> = LazyLock::new(|| {
            let exporter = InMemorySpanExporter::default();
            // The simple processor exports each span as it ends: nothing to wait for.
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(exporter.clone())
                .build();
            telemetry::install_tracing(&provider);
            exporter
        });

        const CITY: &str = r#"{"_index":"city_v1","_id":"3","found":true,"_source":{"id":3,"countryIso":"CZ","isFeatured":true,"regionId":7,"name.en":"Brno"}}"#;
        const REGION: &str =
            r#"{"_index":"region_v1","_id":"7","found":true,"_source":{"name.en":"South Moravian Region"}}"#;

        /// An Elasticsearch stand-in on 127.0.0.1 that answers city 3 and region 7, one request
        /// per connection; returns its URL and the head of every request it received.
        fn elasticsearch() -> (elasticsearch::http::Url, Arc<Mutex<Vec<String>>>) {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let url = elasticsearch::http::Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
            let heads = Arc::new(Mutex::new(Vec::new()));
            let received = Arc::clone(&heads);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let mut stream = stream.unwrap();
                    let mut head = Vec::new();
                    let mut buffer = [0; 4096];
                    while !head.ends_with(b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let body = if head.starts_with("GET /city/_doc/3?") {
                        CITY
                    } else {
                        REGION
                    };
                    received.lock().unwrap().push(head);
                    let _ = stream.write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    );
                }
            });
            (url, heads)
        }

        /// One request to the app as `main` builds it with tracing `on` (and its Elasticsearch
        /// stand-in), with `traceparent` if given: its status, and the `traceparent` of each
        /// Elasticsearch request it made (`None` where there was none).
        async fn traced_call(
            on: bool,
            method: &str,
            uri: &str,
            traceparent: Option<&str>,
        ) -> (StatusCode, Vec<Option<String>>) {
            LazyLock::force(&SPANS);
            let (url, heads) = elasticsearch();
            let repository = CityRepository::new(&url, Duration::from_secs(2), Shared::default(), on).unwrap();
            let app = init_service(app(CityService::new(repository), on)).await;
            let mut request = TestRequest::default()
                .method(Method::from_bytes(method.as_bytes()).unwrap())
                .uri(uri);
            if let Some(traceparent) = traceparent {
                request = request.insert_header(("traceparent", traceparent));
            }
            let status = call_service(&app, request.to_request()).await.status();
            let sent = heads
                .lock()
                .unwrap()
                .iter()
                .map(|head| {
                    head.lines()
                        .find_map(|line| line.strip_prefix("traceparent: "))
                        .map(str::to_owned)
                })
                .collect();
            (status, sent)
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
                true,
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
            let (status, sent) = traced_call(true, "GET", "/city/v1/get?id=3&language=en", None).await;
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
                let (answered, _) = traced_call(true, method, uri, Some(&caller(&trace, "01"))).await;
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
            let (status, sent) =
                traced_call(true, "GET", "/city/v1/get?id=3&language=en", Some(&caller(trace, "00"))).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(sent.len(), 2);
            for traceparent in sent {
                let traceparent = traceparent.expect("a traceparent");
                assert!(traceparent.starts_with(&format!("00-{trace}-")), "{traceparent}");
                assert!(traceparent.ends_with("-00"), "{traceparent}");
            }
            assert!(spans_of(TraceId::from_hex(trace).unwrap()).is_empty());
        }

        /// Tracing off (the SDK installed or not): a caller's `traceparent` is not passed on, and
        /// no span is made.
        #[actix_web::test]
        async fn off_sends_no_traceparent_and_makes_no_span() {
            let trace = "6bf92f3577b34da6a3ce929d0e0e4736";
            let (status, sent) = traced_call(
                false,
                "GET",
                "/city/v1/get?id=3&language=en",
                Some(&caller(trace, "01")),
            )
            .await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(sent, vec![None, None]);
            assert!(spans_of(TraceId::from_hex(trace).unwrap()).is_empty());
        }

        /// An Elasticsearch request that fails is a failed client span; the server span of the
        /// 503 is failed too.
        #[actix_web::test]
        async fn failures_are_span_errors() {
            LazyLock::force(&SPANS);
            let nowhere = elasticsearch::http::Url::parse("http://127.0.0.1:1").unwrap();
            let repository =
                CityRepository::new(&nowhere, Duration::from_millis(500), Shared::default(), true).unwrap();
            let service = init_service(app(CityService::new(repository), true)).await;
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
            let repository = CityRepository::new(&url, Duration::from_millis(300), Shared::default(), true).unwrap();
            let service = init_service(app(CityService::new(repository), true)).await;
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
    }

    /// The app on actix-web's `HttpServer` (one worker, no signal handling) on `listener`, running
    /// on the test's runtime until its handle stops it.
    fn serve_on(listener: std::net::TcpListener) -> actix_web::dev::ServerHandle {
        let server = HttpServer::new(|| app(nowhere(), false))
            .workers(1)
            .disable_signals()
            .listen(listener)
            .unwrap()
            .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        handle
    }

    /// Sends `input` on one connection to the app on actix-web's `HttpServer`, as `main` serves
    /// it; everything it answers until it closes the connection.
    async fn on_the_wire(input: Vec<u8>) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let handle = serve_on(listener);
        let answer = actix_web::rt::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(address).unwrap();
            stream.write_all(&input).unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).unwrap();
            String::from_utf8_lossy(&answer).into_owned()
        })
        .await
        .unwrap();
        handle.stop(false).await;
        answer
    }

    /// On the wire: a HEAD keeps its GET's Content-Length and has no body, a 32 KiB target is
    /// the JSON 414, `Connection: close` ends the connection (pipelined in one write; nothing
    /// follows the close: actix-http would answer it, see docs/upstream).
    #[actix_web::test]
    async fn head_414_and_close_on_the_wire() {
        let long = format!("/health?{}", "q".repeat(32 * 1024));
        let requests = [
            "HEAD /health HTTP/1.1\r\nHost: t\r\n\r\n".to_owned(),
            format!("GET {long} HTTP/1.1\r\nHost: t\r\n\r\n"),
            "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".to_owned(),
        ];
        let answer = on_the_wire(requests.concat().into_bytes()).await;
        let answers: Vec<&str> = answer.split("HTTP/1.1 ").skip(1).collect();
        assert_eq!(answers.len(), 3, "{answer}");
        let too_long = r#"{"message":"URI Too Long: request target exceeds 8192 bytes."}"#;
        assert!(answers[0].starts_with("200 OK\r\n"), "{answer}");
        assert!(answers[0].contains("content-length: 15\r\n"), "{answer}");
        assert!(answers[0].ends_with("\r\n\r\n"), "{answer}");
        assert!(answers[1].starts_with("414 URI Too Long\r\n"), "{answer}");
        assert!(answers[1].ends_with(too_long), "{answer}");
        assert!(answers[2].starts_with("200 OK\r\n"), "{answer}");
        assert!(answers[2].contains("connection: close\r\n"), "{answer}");
        assert!(answers[2].ends_with(r#"{"status":"UP"}"#), "{answer}");
    }
}
