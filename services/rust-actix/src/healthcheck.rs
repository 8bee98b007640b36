//! The spec's health check mode: `GET /health` on 127.0.0.1:`PORT`, exit 0 for a 200 within 2 s,
//! else 1. For `HEALTHCHECK` in an image with no shell or curl.

use std::process::ExitCode;
use std::time::Duration;

/// The answer must come within this (the spec's 2 s).
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The health check mode's port: `PORT`, or 8080 when it is unset or not a valid port.
pub fn port(port: Option<String>) -> u16 {
    port.and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p > 0)
        .unwrap_or(8080)
}

/// The request is reqwest's, the HTTP client the Elasticsearch client already brings; the 2 s cap
/// is its total request timeout (connect, send, the answer's head).
pub async fn run(port: u16) -> ExitCode {
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
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
