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
use log::warn;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout_at};

use crate::errors::AppError;
use crate::models::Language;
use crate::telemetry::{ClientSpan, ClientTracing, describe};

const CITY_ALIAS: &str = "city";
const REGION_ALIAS: &str = "region";
/// A region is cached for every language, so all its names are fetched (and nothing else:
/// `geometry` can be large).
const REGION_FIELDS: &[&str] = &["name.cs", "name.de", "name.en", "name.pl", "name.sk"];

/// A document's `_source`: a JSON object with GoOut's flat dotted keys (`"name.en"`).
pub type Source = Value;

/// The lookups the city service depends on (implemented by [`CityRepository`]; a fake in the
/// service's tests). `Ok(None)` is a plain not-found; an error is the backend's (503, 504).
pub trait CityLookup {
    /// The city's stored fields, with its name in `language` if it has one.
    async fn find_city(&self, id: i64, language: Language) -> Result<Option<Source>, AppError>;
    /// The region's stored names.
    async fn find_region(&self, id: i64) -> Result<Option<Arc<Source>>, AppError>;
}

/// Regions that were found, for the life of the process, shared by all workers.
/// Misses and failures are never cached.
#[derive(Clone, Default)]
pub struct RegionCache(Arc<RwLock<HashMap<i64, Arc<Source>>>>);

impl RegionCache {
    fn get(&self, id: i64) -> Option<Arc<Source>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).get(&id).cloned()
    }

    fn insert(&self, id: i64, region: Source) -> Arc<Source> {
        let region = Arc::new(region);
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&region));
        region
    }
}

/// Requests in flight to Elasticsearch, across all workers (the spec's bound; sized by
/// measurement, see README.md). Beyond it a request waits for a permit, inside its timeout.
pub const MAX_IN_FLIGHT: usize = 64;

/// What the workers' repositories share: the region cache and the permits for requests in
/// flight to Elasticsearch.
#[derive(Clone)]
pub struct Shared {
    regions: RegionCache,
    in_flight: Arc<Semaphore>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            regions: RegionCache::default(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }
}

/// One per worker (its own connection pool, at most [`MAX_IN_FLIGHT`] busy connections in all
/// workers together), all sharing one [`Shared`].
pub struct CityRepository {
    client: Elasticsearch,
    shared: Shared,
    timeout: Duration,
    /// Tracing on: a CLIENT span per request, its context sent as `traceparent`.
    tracing: Option<ClientTracing>,
}

/// The part of a GET-document answer we read.
#[derive(Deserialize)]
struct GetResponse {
    found: bool,
    #[serde(rename = "_source")]
    source: Option<Source>,
}

impl CityRepository {
    /// `url` may carry `user:password@`: they are sent as basic auth, never as part of a
    /// request URL (so they never appear in error messages either). `traced`: tracing is on.
    pub fn new(url: &Url, timeout: Duration, shared: Shared, traced: bool) -> Result<CityRepository, BuildError> {
        let mut base = url.clone();
        let _ = base.set_username("");
        let _ = base.set_password(None);
        if !base.path().ends_with('/') {
            // Url::join, used per request, would otherwise drop the last path segment.
            base.set_path(&format!("{}/", base.path()));
        }
        let tracing = traced.then(|| ClientTracing::new(&base));
        let mut builder = TransportBuilder::new(SingleNodeConnectionPool::new(base))
            .disable_proxy() // talk to Elasticsearch directly, whatever HTTP_PROXY says
            // Uncompressed answers (spec): the client's reqwest would ask for gzip otherwise.
            .header(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        if !url.username().is_empty() || url.password().is_some() {
            let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
            let (user, password) = (decode(url.username()), decode(url.password().unwrap_or("")));
            builder = builder.auth(Credentials::Basic(user, password));
        }
        Ok(CityRepository {
            client: Elasticsearch::new(builder.build()?),
            shared,
            timeout,
            tracing,
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
    /// a permit included, must finish within the timeout. Tracing on, the request (not the wait)
    /// is a CLIENT span.
    async fn get_source(&self, alias: &str, id: i64, fields: &[&str]) -> Result<Option<Source>, AppError> {
        let id = id.to_string();
        let deadline = Instant::now() + self.timeout;
        let timed_out = || {
            warn!(timeout_ms = self.timeout.as_millis() as u64; "Elasticsearch timed out: GET {alias}/_doc/{id}");
            AppError::Timeout
        };
        let Ok(permit) = timeout_at(deadline, self.shared.in_flight.acquire()).await else {
            return Err(timed_out());
        };
        let _permit = permit.map_err(|_| AppError::Unavailable)?;
        let span = self
            .tracing
            .as_ref()
            .map(|tracing| tracing.start("get", "GET", alias, &id));
        let result = timeout_at(deadline, self.get_source_now(alias, &id, fields, span.as_ref()))
            .await
            .unwrap_or_else(|_| Err(timed_out()));
        if let (Some(span), Err(error)) = (&span, &result) {
            span.failed(error);
        }
        result
    }

    async fn get_source_now(
        &self,
        alias: &str,
        id: &str,
        fields: &[&str],
        span: Option<&ClientSpan>,
    ) -> Result<Option<Source>, AppError> {
        let mut request = self.client.get(GetParts::IndexId(alias, id))._source_includes(fields);
        if let Some(span) = span {
            for (name, value) in &span.propagation_headers() {
                request = request.header(name.clone(), value.clone());
            }
        }
        let response = request.send().await.map_err(|e| backend_error(alias, id, &e))?;
        let status = response.status_code().as_u16();
        if let Some(span) = span {
            span.answered(status);
        }
        if status != 200 && status != 404 {
            warn!(status = status; "Elasticsearch answered GET {alias}/_doc/{id} with an error status");
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
                warn!(status = status; "Elasticsearch answered GET {alias}/_doc/{id} with neither a document nor a plain not-found");
                Err(AppError::Unavailable)
            }
        }
    }
}

impl CityLookup for CityRepository {
    /// The city's scalar fields and its name in `language`; never `geometry` or `population`.
    async fn find_city(&self, id: i64, language: Language) -> Result<Option<Source>, AppError> {
        let name = format!("name.{language}");
        let fields = ["id", "countryIso", "isFeatured", "regionId", name.as_str()];
        self.get_source(CITY_ALIAS, id, &fields).await
    }

    /// The region's names, from the cache or else from Elasticsearch.
    async fn find_region(&self, id: i64) -> Result<Option<Arc<Source>>, AppError> {
        if let Some(region) = self.shared.regions.get(id) {
            return Ok(Some(region));
        }
        let region = self.get_source(REGION_ALIAS, id, REGION_FIELDS).await?;
        Ok(region.map(|region| self.shared.regions.insert(id, region)))
    }
}

/// A failed round-trip of `GET <alias>/_doc/<id>`: no answer in time is a timeout; refused,
/// reset, an unreadable or unexpected answer is "unavailable". Logged with the failure in `error`.
fn backend_error(alias: &str, id: &str, error: &elasticsearch::Error) -> AppError {
    let text = describe(error);
    if error.is_timeout() {
        warn!(error = text.as_str(); "Elasticsearch timed out: GET {alias}/_doc/{id}");
        AppError::Timeout
    } else {
        warn!(error = text.as_str(); "Elasticsearch unavailable: GET {alias}/_doc/{id}");
        AppError::Unavailable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A one-shot HTTP server on 127.0.0.1 that answers every request with `response`
    /// (or never answers, when `None`). Returns its URL.
    fn fake_elasticsearch(response: Option<&'static str>) -> Url {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4) {
                let mut stream = stream.unwrap();
                let mut buffer = [0; 4096];
                let _ = stream.read(&mut buffer);
                match response {
                    Some(response) => {
                        let _ = stream.write_all(response.as_bytes());
                    }
                    None => std::thread::sleep(Duration::from_secs(2)),
                }
            }
        });
        url
    }

    fn repository(url: &Url) -> CityRepository {
        CityRepository::new(url, Duration::from_millis(300), Shared::default(), false).unwrap()
    }

    fn answer(status: &str, body: &'static str) -> &'static str {
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        Box::leak(response.into_boxed_str())
    }

    #[actix_web::test]
    async fn refused_is_unavailable() {
        let url = Url::parse("http://127.0.0.1:1").unwrap();
        assert_eq!(
            repository(&url).find_city(1, Language::En).await,
            Err(AppError::Unavailable)
        );
        assert!(
            repository(&url)
                .check_health()
                .await
                .unwrap_err()
                .contains("127.0.0.1:1")
        );
    }

    #[actix_web::test]
    async fn no_answer_is_timeout() {
        let url = fake_elasticsearch(None);
        assert_eq!(
            repository(&url).find_city(1, Language::En).await,
            Err(AppError::Timeout)
        );
    }

    #[actix_web::test]
    async fn error_statuses_are_unavailable() {
        for status in [
            "429 Too Many Requests",
            "500 Internal Server Error",
            "503 Service Unavailable",
        ] {
            let url = fake_elasticsearch(Some(answer(status, "{}")));
            assert_eq!(
                repository(&url).find_city(1, Language::En).await,
                Err(AppError::Unavailable)
            );
        }
    }

    #[actix_web::test]
    async fn missing_index_is_unavailable_not_a_miss() {
        let body = r#"{"error":{"type":"index_not_found_exception"},"status":404}"#;
        let url = fake_elasticsearch(Some(answer("404 Not Found", body)));
        assert_eq!(
            repository(&url).find_city(1, Language::En).await,
            Err(AppError::Unavailable)
        );
    }

    #[actix_web::test]
    async fn plain_not_found_is_none() {
        let body = r#"{"_index":"city_v1","_id":"7","found":false}"#;
        let url = fake_elasticsearch(Some(answer("404 Not Found", body)));
        assert_eq!(repository(&url).find_city(7, Language::En).await, Ok(None));
    }

    #[actix_web::test]
    async fn found_document_is_its_source() {
        let body = r#"{"_index":"city_v1","_id":"1","found":true,"_source":{"id":1,"name.en":"Prague"}}"#;
        let url = fake_elasticsearch(Some(answer("200 OK", body)));
        let source = repository(&url).find_city(1, Language::En).await.unwrap().unwrap();
        assert_eq!(source, serde_json::json!({"id": 1, "name.en": "Prague"}));
    }

    #[actix_web::test]
    async fn found_regions_are_cached_misses_are_not() {
        let found = r#"{"_index":"region_v1","_id":"1","found":true,"_source":{"name.en":"Prague"}}"#;
        let shared = Shared::default();
        let url = fake_elasticsearch(Some(answer("200 OK", found)));
        let first = CityRepository::new(&url, Duration::from_millis(300), shared.clone(), false).unwrap();
        assert!(first.find_region(1).await.unwrap().is_some());
        // Another worker's repository, pointing nowhere, answers from the shared cache.
        let nowhere = Url::parse("http://127.0.0.1:1").unwrap();
        let second = CityRepository::new(&nowhere, Duration::from_millis(300), shared.clone(), false).unwrap();
        assert_eq!(second.find_region(1).await.unwrap().unwrap()["name.en"], "Prague");
        assert_eq!(second.find_region(2).await, Err(AppError::Unavailable));
        let missing = r#"{"_index":"region_v1","_id":"3","found":false}"#;
        let url = fake_elasticsearch(Some(answer("404 Not Found", missing)));
        let third = CityRepository::new(&url, Duration::from_millis(300), shared.clone(), false).unwrap();
        assert_eq!(third.find_region(3).await, Ok(None));
        assert!(shared.regions.get(3).is_none());
    }
}
