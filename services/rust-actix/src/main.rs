//! cityref city service on actix-web: startup, the server, and shutdown (the application is the
//! library's, `transport::app`). The contract is `spec/openapi.yaml`; see README.md for the design.

use std::num::NonZero;
use std::process::ExitCode;
use std::time::Duration;

use actix_web::{HttpServer, web};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tracing::{error, info, warn};
use tracing_subscriber::filter::LevelFilter;

use cityref_rust_actix::config::{Config, redact};
use cityref_rust_actix::repository::CityRepository;
use cityref_rust_actix::service::CityService;
use cityref_rust_actix::telemetry::{self, describe, init_tracing, shutdown_tracing};
use cityref_rust_actix::{healthcheck, transport};

/// The startup check gives up after this, whatever `ELASTICSEARCH_TIMEOUT_MS` says, so a
/// failing start ends well within 15 s.
const STARTUP_CHECK_LIMIT: Duration = Duration::from_secs(10);
/// In-flight requests get this long after SIGTERM/SIGINT (the contract allows 15 s in all).
const SHUTDOWN_TIMEOUT_SECS: u64 = 10;

#[actix_web::main]
async fn main() -> ExitCode {
    if std::env::args().skip(1).eq(["healthcheck"]) {
        return healthcheck::run(healthcheck::port(std::env::var("PORT").ok())).await;
    }
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(e) => {
            // The level is not known yet; an error line is written at every level.
            telemetry::init(LevelFilter::INFO, None);
            error!(
                variable = e.variable,
                error = describe(&e).as_str(),
                "invalid configuration"
            );
            return ExitCode::FAILURE;
        }
    };
    // Tracing off: no tracer provider, no propagator, no OpenTelemetry layer.
    let tracer_provider = match config.tracing.then(init_tracing).transpose() {
        Ok(provider) => provider,
        Err(e) => {
            telemetry::init(config.log_level, None);
            error!(error = describe(&e).as_str(), "cannot set up tracing");
            return ExitCode::FAILURE;
        }
    };
    telemetry::init(config.log_level, tracer_provider.as_ref());

    let url = redact(&config.elasticsearch_url);
    let repository = match CityRepository::new(&config.elasticsearch_url, config.elasticsearch_timeout) {
        Ok(repository) => repository,
        Err(e) => {
            error!(
                url = url.as_str(),
                error = describe(&e).as_str(),
                "cannot create an Elasticsearch client for {url}"
            );
            return ExitCode::FAILURE;
        }
    };
    let limit = config.elasticsearch_timeout.min(STARTUP_CHECK_LIMIT);
    match tokio::time::timeout(limit, repository.check_health()).await {
        Ok(Ok(())) => info!(url = url.as_str(), "Elasticsearch at {url} is reachable"),
        Ok(Err(reason)) => {
            error!(
                url = url.as_str(),
                error = reason.as_str(),
                "Elasticsearch at {url} is not reachable"
            );
            return ExitCode::FAILURE;
        }
        Err(_) => {
            let reason = format!("no answer within {} ms", limit.as_millis());
            error!(
                url = url.as_str(),
                error = reason.as_str(),
                "Elasticsearch at {url} is not reachable"
            );
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
    // Each worker its own client (its connection pool); the region cache and the in-flight
    // permits are shared by all (`CityRepository::for_worker` says why).
    let repository = std::sync::Arc::new(repository);
    let server = HttpServer::new(move || {
        let repository = repository.for_worker().expect("the same URL built a client above");
        transport::app(web::Data::new(CityService::new(repository)))
    })
    .shutdown_signal(stop_signal(terminate, interrupt)) // graceful; replaces actix's handlers
    .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
    .bind(("0.0.0.0", config.port));
    let server = match server {
        Ok(server) => server.run(),
        Err(e) => {
            error!(
                port = config.port,
                error = describe(&e).as_str(),
                "cannot listen on port {}",
                config.port
            );
            return ExitCode::FAILURE;
        }
    };
    info!(port = config.port, workers, "listening on port {}", config.port);
    let exit = match server.await {
        Ok(()) => {
            info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            error!(error = describe(&e).as_str(), "server failed");
            ExitCode::FAILURE
        }
    };
    // The spans of the last requests are exported before the process ends.
    if let Some(provider) = tracer_provider
        && let Err(e) = shutdown_tracing(&provider)
    {
        warn!(
            error = describe(&e).as_str(),
            "tracing: the last spans were not exported"
        );
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
    info!(signal = name, "{name} received; stopping gracefully");
}
