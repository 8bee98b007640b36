//! The Elasticsearch repository against stand-ins: failure mapping, documents, the region cache.

mod common;

use std::sync::Arc;
use std::time::Duration;

use cityref_rust_actix::errors::AppError;
use cityref_rust_actix::models::Language;
use cityref_rust_actix::repository::{CityDoc, CityLookup, CityRepository, RegionDoc};
use common::answer;
use elasticsearch::http::Url;

fn repository(url: &Url) -> CityRepository {
    CityRepository::new(url, Duration::from_millis(300)).unwrap()
}

/// A stand-in that answers every request with `status` and `body`.
fn answering(status: &'static str, body: &'static str) -> Url {
    common::elasticsearch(move |_| Some(answer(status, body))).0
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
    let (url, _) = common::elasticsearch(|_| None);
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
        let url = answering(status, "{}");
        assert_eq!(
            repository(&url).find_city(1, Language::En).await,
            Err(AppError::Unavailable)
        );
    }
}

#[actix_web::test]
async fn missing_index_is_unavailable_not_a_miss() {
    let url = answering(
        "404 Not Found",
        r#"{"error":{"type":"index_not_found_exception"},"status":404}"#,
    );
    assert_eq!(
        repository(&url).find_city(1, Language::En).await,
        Err(AppError::Unavailable)
    );
}

#[actix_web::test]
async fn plain_not_found_is_none() {
    let url = answering("404 Not Found", r#"{"_index":"city_v1","_id":"7","found":false}"#);
    assert_eq!(repository(&url).find_city(7, Language::En).await, Ok(None));
}

fn city(source: serde_json::Value) -> Result<CityDoc, serde_json::Error> {
    serde_json::from_value(source)
}

#[actix_web::test]
async fn found_document_is_its_typed_source() {
    let url = answering("200 OK", common::CITY_3);
    let found = repository(&url).find_city(3, Language::En).await.unwrap().unwrap();
    let want = serde_json::json!({"id": 3, "countryIso": "CZ", "isFeatured": true, "regionId": 7, "name.en": "Brno"});
    assert_eq!(found, city(want).unwrap());
    assert_eq!(found.names.get(Language::En), Some("Brno"));
    assert_eq!(found.names.get(Language::De), None);
    // A stored city that does not fit the type is malformed.
    let url = answering(
        "200 OK",
        r#"{"found":true,"_source":{"id":3,"countryIso":"CZ","regionId":7}}"#,
    );
    assert_eq!(
        repository(&url).find_city(3, Language::En).await,
        Err(AppError::CityMalformed(3))
    );
}

#[test]
fn stored_city_types() {
    let valid = serde_json::json!({"id": 1, "countryIso": "CZ", "isFeatured": true, "regionId": 1});
    assert!(city(valid.clone()).is_ok());
    for (key, value) in [
        ("isFeatured", serde_json::json!("yes")),
        ("id", serde_json::json!(1.5)),
        ("id", serde_json::json!(9223372036854775808u64)),
        ("regionId", serde_json::json!("1")),
        ("countryIso", serde_json::json!(null)),
    ] {
        let mut doc = valid.clone();
        doc[key] = value;
        assert!(city(doc.clone()).is_err(), "{doc}");
        doc.as_object_mut().unwrap().remove(key);
        assert!(city(doc.clone()).is_err(), "{doc}");
    }
}

/// Absent, `null`, empty or not a string: missing, and never a malformed document.
#[test]
fn names() {
    let source = serde_json::json!({"name.en": "Prague", "name.de": "", "name.pl": null, "name.cs": 5});
    let region: RegionDoc = serde_json::from_value(source).unwrap();
    assert_eq!(region.names.get(Language::En), Some("Prague"));
    for language in [Language::De, Language::Pl, Language::Cs, Language::Sk] {
        assert_eq!(region.names.get(language), None);
    }
    let city =
        city(serde_json::json!({"id": 1, "countryIso": "CZ", "isFeatured": true, "regionId": 1, "name.en": [1]}));
    assert_eq!(city.unwrap().names.get(Language::En), None);
}

#[actix_web::test]
async fn found_regions_are_cached_misses_are_not() {
    let found = r#"{"_index":"region_v1","_id":"1","found":true,"_source":{"name.en":"Prague"}}"#;
    let missing = r#"{"_index":"region_v1","_id":"3","found":false}"#;
    let (url, heads) = common::elasticsearch(move |head| {
        Some(if head.starts_with("GET /region/_doc/1?") {
            answer("200 OK", found)
        } else {
            answer("404 Not Found", missing)
        })
    });
    let repository = repository(&url);
    for _ in 0..2 {
        let region: Arc<RegionDoc> = repository.find_region(1).await.unwrap().unwrap();
        assert_eq!(region.names.get(Language::En), Some("Prague"));
        assert_eq!(repository.find_region(3).await, Ok(None));
    }
    let asked: Vec<String> = heads.lock().unwrap().iter().map(|head| head[..20].to_owned()).collect();
    assert_eq!(
        asked,
        ["GET /region/_doc/1?_", "GET /region/_doc/3?_", "GET /region/_doc/3?_"]
    );
}

/// An Elasticsearch stand-in that keeps every connection open and answers each request on it,
/// after `delay`, with a plain not-found.
fn keep_alive(delay: Duration) -> Url {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
    let body = r#"{"_index":"city_v1","_id":"1","found":false}"#;
    let answer = format!(
        "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let (mut stream, answer) = (stream.unwrap(), answer.clone());
            std::thread::spawn(move || {
                let (mut head, mut buffer) = (Vec::new(), [0; 4096]);
                while let Ok(n @ 1..) = stream.read(&mut buffer) {
                    head.extend_from_slice(&buffer[..n]);
                    if head.ends_with(b"\r\n\r\n") {
                        head.clear();
                        std::thread::sleep(delay);
                        let _ = stream.write_all(answer.as_bytes());
                    }
                }
            });
        }
    });
    url
}

/// Two actix workers, each a thread with its own runtime: the first opens a connection, the
/// second's request is in flight when the first worker stops (as an idle worker does first at a
/// graceful stop). A client shared by both would have lent the second worker the first one's
/// connection, which ends with its runtime; each worker's own client does not.
#[test]
fn a_workers_request_outlives_another_workers_runtime() {
    let first = CityRepository::new(&keep_alive(Duration::from_millis(300)), Duration::from_secs(5)).unwrap();
    let second = first.for_worker().unwrap();
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let (opened, is_open) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        runtime().block_on(async {
            opened.send(first.find_city(1, Language::En).await).unwrap();
            // alive, as a worker serving nothing, until told to stop
            while stopped.try_recv().is_err() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    });
    assert_eq!(is_open.recv().unwrap(), Ok(None));
    let in_flight = std::thread::spawn(move || runtime().block_on(second.find_city(1, Language::En)));
    std::thread::sleep(Duration::from_millis(100));
    stop.send(()).unwrap();
    worker.join().unwrap();
    assert_eq!(in_flight.join().unwrap(), Ok(None));
}

#[actix_web::test]
async fn workers_share_the_region_cache() {
    let found = r#"{"_index":"region_v1","_id":"1","found":true,"_source":{"name.en":"Prague"}}"#;
    let (url, heads) = common::elasticsearch(move |_| Some(answer("200 OK", found)));
    let first = repository(&url);
    let second = first.for_worker().unwrap();
    assert!(first.find_region(1).await.unwrap().is_some());
    assert!(second.find_region(1).await.unwrap().is_some());
    assert_eq!(heads.lock().unwrap().len(), 1);
}
