//! The contract's schemas as Rust types, generated from `spec/openapi.yaml` into `generated/`
//! (`make generate`; see `generated/README.md`). Generated code is neither linted nor formatted.
#![allow(dead_code, unused_imports, clippy::all)]

#[path = "../generated/src/models/city.rs"]
#[rustfmt::skip]
mod city;
#[path = "../generated/src/models/error.rs"]
#[rustfmt::skip]
mod error;
#[path = "../generated/src/models/health.rs"]
#[rustfmt::skip]
mod health;
#[path = "../generated/src/models/language.rs"]
#[rustfmt::skip]
mod language;

pub use city::City;
pub use error::Error;
pub use health::{Health, Status as HealthStatus};
pub use language::Language;
