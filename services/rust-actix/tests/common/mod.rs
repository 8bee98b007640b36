//! What the integration tests share: Elasticsearch stand-ins and the service over them.
#![allow(dead_code)] // each test binary uses part of it

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use cityref_rust_actix::repository::CityRepository;
use cityref_rust_actix::service::CityService;
use elasticsearch::http::Url;

/// The service as `main` builds it, over the Elasticsearch at `url`.
pub fn service(url: &Url, timeout: Duration) -> web::Data<CityService> {
    web::Data::new(CityService::new(CityRepository::new(url, timeout).unwrap()))
}

/// The service with an Elasticsearch nobody listens on.
pub fn nowhere() -> web::Data<CityService> {
    service(&Url::parse("http://127.0.0.1:1").unwrap(), Duration::from_millis(500))
}

/// An HTTP answer with a JSON body.
pub fn answer(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// An Elasticsearch stand-in on 127.0.0.1, one request per connection, answering each request
/// head with `respond` (`None`: never answers); returns its URL and the head of every request it
/// received.
pub fn elasticsearch(respond: impl Fn(&str) -> Option<String> + Send + 'static) -> (Url, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
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
            let response = respond(&head);
            received.lock().unwrap().push(head);
            match response {
                Some(response) => drop(stream.write_all(response.as_bytes())),
                None => std::thread::sleep(Duration::from_secs(2)),
            }
        }
    });
    (url, heads)
}

pub const CITY_3: &str = r#"{"_index":"city_v1","_id":"3","found":true,"_source":{"id":3,"countryIso":"CZ","isFeatured":true,"regionId":7,"name.en":"Brno"}}"#;
pub const REGION_7: &str =
    r#"{"_index":"region_v1","_id":"7","found":true,"_source":{"name.en":"South Moravian Region"}}"#;

/// The stand-in with city 3 and region 7.
pub fn brno() -> (Url, Arc<Mutex<Vec<String>>>) {
    elasticsearch(|head| {
        Some(answer(
            "200 OK",
            if head.starts_with("GET /city/_doc/3?") {
                CITY_3
            } else {
                REGION_7
            },
        ))
    })
}

/// The `traceparent` each request to a stand-in carried (`None` where there was none).
pub fn traceparents(heads: &Mutex<Vec<String>>) -> Vec<Option<String>> {
    heads
        .lock()
        .unwrap()
        .iter()
        .map(|head| {
            head.lines()
                .find_map(|line| line.strip_prefix("traceparent: "))
                .map(str::to_owned)
        })
        .collect()
}
