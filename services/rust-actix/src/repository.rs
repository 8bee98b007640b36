//! Elasticsearch access: cities and regions by document id, found regions cached.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use elasticsearch::auth::Credentials;
use elasticsearch::cluster::ClusterHealthParts;
use elasticsearch::http::Url;
use elasticsearch::http::headers::{ACCEPT_ENCODING, HeaderValue};
use elasticsearch::http::transport::{BuildError, SingleNodeConnectionPool, TransportBuilder};
use elasticsearch::{Elasticsearch, GetParts};
use serde::de::{Deserializer, IgnoredAny};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout_at};
use tracing::{Span, warn};

use crate::errors::AppError;
use crate::models::Language;
use crate::telemetry::{self, describe};

const CITY_ALIAS: &str = "city";
const REGION_ALIAS: &str = "region";
/// A region is cached for every language, so all its names are fetched (and nothing else:
/// `geometry` can be large).
const REGION_FIELDS: &[&str] = &["name.cs", "name.de", "name.en", "name.pl", "name.sk"];

/// A city document's `_source` as fetched: any missing or mistyped field but the name makes the
/// city malformed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CityDoc {
    pub id: i64,
    pub country_iso: String,
    pub is_featured: bool,
    pub region_id: i64,
    #[serde(flatten)]
    pub names: Names,
}

/// A region document's `_source` as fetched: its names.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct RegionDoc {
    #[serde(flatten)]
    pub names: Names,
}

/// GoOut's flat dotted name keys (`"name.en"`); a name that is absent, `null`, empty or not a
/// string is missing, never a malformed document.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Names {
    #[serde(rename = "name.cs", default, deserialize_with = "name")]
    cs: Option<String>,
    #[serde(rename = "name.de", default, deserialize_with = "name")]
    de: Option<String>,
    #[serde(rename = "name.en", default, deserialize_with = "name")]
    en: Option<String>,
    #[serde(rename = "name.pl", default, deserialize_with = "name")]
    pl: Option<String>,
    #[serde(rename = "name.sk", default, deserialize_with = "name")]
    sk: Option<String>,
}

impl Names {
    pub fn get(&self, language: Language) -> Option<&str> {
        match language {
            Language::Cs => &self.cs,
            Language::De => &self.de,
            Language::En => &self.en,
            Language::Pl => &self.pl,
            Language::Sk => &self.sk,
        }
        .as_deref()
    }
}

fn name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Name {
        Text(String),
        Other(IgnoredAny),
    }
    Ok(match Name::deserialize(deserializer)? {
        Name::Text(text) if !text.is_empty() => Some(text),
        _ => None,
    })
}

/// The lookups the city service depends on (implemented by [`CityRepository`]; a fake in the
/// service's tests). `Ok(None)` is a plain not-found; an error is the backend's (503, 504) or a
/// malformed city (500). (No `Send` bound on the futures: actix-web's workers are single-threaded.)
#[allow(async_fn_in_trait)]
pub trait CityLookup {
    /// The city's stored fields, with its name in `language` if it has one.
    async fn find_city(&self, id: i64, language: Language) -> Result<Option<CityDoc>, AppError>;
    /// The region's stored names.
    async fn find_region(&self, id: i64) -> Result<Option<Arc<RegionDoc>>, AppError>;
}

/// Requests in flight to Elasticsearch, across all workers (the spec's bound; sized by
/// measurement, see README.md). Beyond it a request waits for a permit, inside its timeout.
pub const MAX_IN_FLIGHT: usize = 64;

/// One per worker (`for_worker`), sharing the region cache and the permits for requests in
/// flight with every other worker; its client (its connection pool) is the worker's own.
pub struct CityRepository {
    client: Elasticsearch,
    /// The configured URL, credentials included, to build each worker's client.
    url: Url,
    timeout: Duration,
    /// Regions that were found, for the life of the process; misses and failures never.
    regions: Arc<RwLock<HashMap<i64, Arc<RegionDoc>>>>,
    in_flight: Arc<Semaphore>,
    /// The node's host and port, for the client spans.
    host: String,
    port: u16,
}

/// The part of a GET-document answer we read.
#[derive(Deserialize)]
struct GetResponse {
    found: bool,
    #[serde(rename = "_source")]
    source: Option<Value>,
}

impl CityRepository {
    /// `url` may carry `user:password@`: they are sent as basic auth, never as part of a
    /// request URL (so they never appear in error messages either).
    pub fn new(url: &Url, timeout: Duration) -> Result<CityRepository, BuildError> {
        Self::sharing(url, timeout, Arc::default(), Arc::new(Semaphore::new(MAX_IN_FLIGHT)))
    }

    /// A repository for another actix worker: the same region cache and in-flight permits, its
    /// own client. reqwest runs each pooled connection on the runtime that opened it, and actix
    /// runs one runtime per worker, so a client shared by the workers would lend one worker's
    /// connections to another; at a graceful stop the idle workers' runtimes end first and their
    /// connections with them, failing the requests still in flight on the others (reqwest's
    /// maintainer: <https://github.com/seanmonstar/reqwest/issues/1148>, 2021-09-01).
    pub fn for_worker(&self) -> Result<CityRepository, BuildError> {
        Self::sharing(
            &self.url,
            self.timeout,
            Arc::clone(&self.regions),
            Arc::clone(&self.in_flight),
        )
    }

    /// A new client for the node at `url`, with the given cache and permits.
    fn sharing(
        url: &Url,
        timeout: Duration,
        regions: Arc<RwLock<HashMap<i64, Arc<RegionDoc>>>>,
        in_flight: Arc<Semaphore>,
    ) -> Result<CityRepository, BuildError> {
        let (client, host, port) = client(url)?;
        Ok(CityRepository {
            client,
            url: url.clone(),
            timeout,
            regions,
            in_flight,
            host,
            port,
        })
    }

    /// The startup round-trip: `GET /_cluster/health` must answer 2xx.
    pub async fn check_health(&self) -> Result<(), String> {
        let response = self
            .client
            .cluster()
            .health(ClusterHealthParts::None)
            .send()
            .await
            .map_err(|e| describe(&e))?;
        match response.status_code() {
            status if status.is_success() => Ok(()),
            status => Err(format!("GET /_cluster/health answered {status}")),
        }
    }

    /// GET `/<alias>/_doc/<id>?_source_includes=<fields>`: the `_source` of a found document,
    /// `None` for a plain not-found, an error for anything else. The whole of it, the wait for
    /// a permit included, must finish within the timeout. The request (not the wait) is a
    /// CLIENT span.
    async fn get_source(&self, alias: &str, id: i64, fields: &[&str]) -> Result<Option<Value>, AppError> {
        let id = id.to_string();
        let deadline = Instant::now() + self.timeout;
        let timed_out = || {
            warn!(
                timeout_ms = self.timeout.as_millis() as u64,
                "Elasticsearch timed out: GET {alias}/_doc/{id}"
            );
            AppError::Timeout
        };
        let Ok(permit) = timeout_at(deadline, self.in_flight.acquire()).await else {
            return Err(timed_out());
        };
        let _permit = permit.map_err(|_| AppError::Unavailable)?;
        let span = telemetry::client_span(alias, &id, &self.host, self.port);
        let result = timeout_at(deadline, self.get_source_now(alias, &id, fields, &span))
            .await
            .unwrap_or_else(|_| Err(timed_out()));
        if let Err(error) = &result {
            telemetry::client_failed(&span, error);
        }
        result
    }

    async fn get_source_now(
        &self,
        alias: &str,
        id: &str,
        fields: &[&str],
        span: &Span,
    ) -> Result<Option<Value>, AppError> {
        let mut request = self.client.get(GetParts::IndexId(alias, id))._source_includes(fields);
        for (name, value) in &telemetry::propagation_headers(span) {
            request = request.header(name.clone(), value.clone());
        }
        let response = request.send().await.map_err(|e| backend_error(alias, id, &e))?;
        let status = response.status_code().as_u16();
        span.record("http.response.status_code", i64::from(status));
        if status != 200 && status != 404 {
            warn!(
                status,
                "Elasticsearch answered GET {alias}/_doc/{id} with an error status"
            );
            return Err(AppError::Unavailable);
        }
        let body: GetResponse = response.json().await.map_err(|e| backend_error(alias, id, &e))?;
        match (status, body) {
            (
                200,
                GetResponse {
                    found: true,
                    source: Some(source @ Value::Object(_)),
                },
            ) => Ok(Some(source)),
            (404, GetResponse { found: false, .. }) => Ok(None),
            _ => {
                warn!(
                    status,
                    "Elasticsearch answered GET {alias}/_doc/{id} with neither a document nor a plain not-found"
                );
                Err(AppError::Unavailable)
            }
        }
    }
}

/// A client for the node at `url` (one connection pool), and the node's host and port.
fn client(url: &Url) -> Result<(Elasticsearch, String, u16), BuildError> {
    let mut base = url.clone();
    let _ = base.set_username("");
    let _ = base.set_password(None);
    if !base.path().ends_with('/') {
        // Url::join, used per request, would otherwise drop the last path segment.
        base.set_path(&format!("{}/", base.path()));
    }
    let (host, port) = (
        base.host_str().unwrap_or_default().to_owned(),
        base.port_or_known_default().unwrap_or_default(),
    );
    let mut builder = TransportBuilder::new(SingleNodeConnectionPool::new(base))
        .disable_proxy() // talk to Elasticsearch directly, whatever HTTP_PROXY says
        // Uncompressed answers (spec): the client's reqwest would ask for gzip otherwise.
        .header(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    if !url.username().is_empty() || url.password().is_some() {
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let (user, password) = (decode(url.username()), decode(url.password().unwrap_or("")));
        builder = builder.auth(Credentials::Basic(user, password));
    }
    Ok((Elasticsearch::new(builder.build()?), host, port))
}

/// A found document's `_source` as `T`; `malformed` if it does not fit.
fn typed<T: DeserializeOwned>(source: Option<Value>, malformed: AppError) -> Result<Option<T>, AppError> {
    source
        .map(|source| T::deserialize(source).map_err(|_| malformed))
        .transpose()
}

impl CityLookup for CityRepository {
    /// The city's scalar fields and its name in `language`; never `geometry` or `population`.
    async fn find_city(&self, id: i64, language: Language) -> Result<Option<CityDoc>, AppError> {
        let name = format!("name.{language}");
        let fields = ["id", "countryIso", "isFeatured", "regionId", name.as_str()];
        typed(
            self.get_source(CITY_ALIAS, id, &fields).await?,
            AppError::CityMalformed(id),
        )
    }

    /// The region's names, from the cache or else from Elasticsearch.
    async fn find_region(&self, id: i64) -> Result<Option<Arc<RegionDoc>>, AppError> {
        if let Some(region) = self.regions.read().unwrap_or_else(PoisonError::into_inner).get(&id) {
            return Ok(Some(Arc::clone(region)));
        }
        let source = self.get_source(REGION_ALIAS, id, REGION_FIELDS).await?;
        // Names never fail to read: any object is a region.
        let Some(region) = typed::<RegionDoc>(source, AppError::Unavailable)?.map(Arc::new) else {
            return Ok(None);
        };
        let mut regions = self.regions.write().unwrap_or_else(PoisonError::into_inner);
        regions.insert(id, Arc::clone(&region));
        Ok(Some(region))
    }
}

/// A failed round-trip of `GET <alias>/_doc/<id>`: no answer in time is a timeout; refused,
/// reset, an unreadable or unexpected answer is "unavailable". Logged with the failure in `error`.
fn backend_error(alias: &str, id: &str, error: &elasticsearch::Error) -> AppError {
    let text = describe(error);
    if error.is_timeout() {
        warn!(error = text.as_str(), "Elasticsearch timed out: GET {alias}/_doc/{id}");
        AppError::Timeout
    } else {
        warn!(
            error = text.as_str(),
            "Elasticsearch unavailable: GET {alias}/_doc/{id}"
        );
        AppError::Unavailable
    }
}
