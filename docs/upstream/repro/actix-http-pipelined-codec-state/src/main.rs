//! actix-web hello world with one slow route and one fast route, nothing else.
//!
//! Pipelined requests behind a slow one show that actix-http's h1 codec frames an answer with
//! the HEAD flag, version and connection type of the last request it *decoded*, not of the
//! request being answered. A HEAD that carries a `Content-Length` body shows the same: actix-http
//! reads the body as the HEAD's, and the HEAD's answer still takes a later GET's state.
//! See ../../actix-http-pipelined-codec-state.md.

use std::time::Duration;

use actix_web::{App, HttpServer, web};

async fn slow() -> &'static str {
    actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    "slow answer\n"
}

async fn fast() -> &'static str {
    "fast answer\n"
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(18090);
    HttpServer::new(|| {
        App::new()
            .service(web::resource("/slow").to(slow)) // any method, HEAD included
            .service(web::resource("/fast").to(fast))
    })
    .workers(1)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
