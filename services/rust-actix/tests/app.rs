//! The whole app in process (actix-web's test service) and on the wire (its `HttpServer`), as
//! `main` builds it, tracing off (no subscriber, no propagator: the untraced service); the health
//! check mode.

mod common;

use std::process::ExitCode;
use std::time::Duration;

use actix_web::HttpServer;
use actix_web::http::{Method, StatusCode, header};
use actix_web::test::{TestRequest, call_service, init_service, read_body};
use cityref_rust_actix::healthcheck;
use cityref_rust_actix::transport::{self, ROUTES, app};
use common::nowhere;

struct Answer {
    status: StatusCode,
    content_type: Option<String>,
    allow: Option<String>,
    body: String,
}

/// One request to the app as `main` builds it, with a backend nobody listens on.
async fn call(method: &str, uri: &str) -> Answer {
    let app = init_service(app(nowhere())).await;
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
    call("FOO", "/health").await;
    call("GET", "/no/such/path").await;
    call("GET", &format!("/health?{}", "x".repeat(transport::MAX_REQUEST_TARGET))).await;
    call("GET", &format!("/{}", "x".repeat(transport::MAX_REQUEST_TARGET))).await;
    let metrics = call("GET", "/metrics").await.body;
    for labels in [
        r#"endpoint="/health",method="GET",status="200""#,
        r#"endpoint="/health",method="PUT",status="405""#,
        r#"endpoint="",method="GET",status="404""#,
        // A 414 is answered before routing, but `match_pattern` still finds a listed path in
        // the resource map: the listed path, else empty.
        r#"endpoint="/health",method="GET",status="414""#,
        r#"endpoint="",method="GET",status="414""#,
        // The method as sent (actix-web-prom's label).
        r#"endpoint="/health",method="FOO",status="405""#,
    ] {
        assert!(
            metrics.contains(&format!("http_requests_duration_seconds_count{{{labels}}}")),
            "{labels}\n{metrics}"
        );
    }
    // The spec's buckets.
    for le in ["0.005", "0.075", "0.75", "2.5", "7.5", "10", "+Inf"] {
        let bucket = format!(
            r#"http_requests_duration_seconds_bucket{{endpoint="/health",method="GET",status="200",le="{le}"}}"#
        );
        assert!(metrics.contains(&bucket), "{bucket}\n{metrics}");
    }
}

#[test]
fn healthcheck_port_is_8080_unless_port_is_valid() {
    assert_eq!(healthcheck::port(None), 8080);
    for invalid in ["", "0", "65536", "-1", "8o", "99999999999"] {
        assert_eq!(healthcheck::port(Some(invalid.into())), 8080, "{invalid}");
    }
    assert_eq!(healthcheck::port(Some("8081".into())), 8081);
}

/// The health check mode against the app on actix-web's `HttpServer` (0), against a port
/// nobody listens on, a server answering 503, and one that never answers (1, after 2 s).
#[actix_web::test]
async fn healthcheck_mode() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = serve_on(listener);
    assert_eq!(healthcheck::run(port).await, ExitCode::SUCCESS);
    handle.stop(false).await;
    assert_eq!(healthcheck::run(port).await, ExitCode::FAILURE);

    let unavailable = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = unavailable.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut stream, _) = unavailable.accept().unwrap();
        let _ = stream.read(&mut [0; 4096]);
        let _ = stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n");
    });
    assert_eq!(healthcheck::run(port).await, ExitCode::FAILURE);

    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap(); // never accepts
    let started = std::time::Instant::now();
    assert_eq!(
        healthcheck::run(silent.local_addr().unwrap().port()).await,
        ExitCode::FAILURE
    );
    let waited = started.elapsed();
    assert!(
        waited >= healthcheck::TIMEOUT && waited < Duration::from_secs(3),
        "{waited:?}"
    );
}

/// The app on actix-web's `HttpServer` (one worker, no signal handling) on `listener`, running
/// on the test's runtime until its handle stops it.
fn serve_on(listener: std::net::TcpListener) -> actix_web::dev::ServerHandle {
    let server = HttpServer::new(|| app(nowhere()))
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

/// Tracing off: a caller's `traceparent` is not passed on to Elasticsearch.
#[actix_web::test]
async fn untraced_sends_no_traceparent() {
    let (url, heads) = common::brno();
    let app = init_service(app(common::service(&url, Duration::from_secs(2)))).await;
    let request = TestRequest::get()
        .uri("/city/v1/get?id=3&language=en")
        .insert_header(("traceparent", "00-6bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    let response = call_service(&app, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        read_body(response).await,
        r#"{"countryIso":"CZ","id":3,"isFeatured":true,"name":"Brno","regionName":"South Moravian Region"}"#
    );
    assert_eq!(common::traceparents(&heads), vec![None, None]);
}
