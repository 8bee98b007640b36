//! cityref city service on actix-web: the application and its parts; `main.rs` starts it.
//! The contract is `spec/openapi.yaml`; see README.md for the design.

pub mod config;
pub mod errors;
pub mod healthcheck;
pub mod models;
pub mod query;
pub mod repository;
pub mod service;
pub mod telemetry;
pub mod transport;
