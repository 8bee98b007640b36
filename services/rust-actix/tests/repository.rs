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
