//! HTTP: the routes (the listed paths, matched exactly), the handlers that decode a request and
//! encode the answer, the request-target limit, and the application as `main` serves it.

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::Uri;
use actix_web::http::header::ContentType;
use actix_web::middleware::{Next, from_fn};
use actix_web::{App, FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, ResponseError, guard, web};

use crate::errors::AppError;
use crate::models::{Health, HealthStatus};
use crate::query;
use crate::service::CityService;
use crate::telemetry::{self, ServerSpan};
use tracing_actix_web::TracingLogger;

const CITY: &str = "/city/v1/get";
const HEALTH: &str = "/health";
const API_DOCS: &str = "/api-docs";
const METRICS: &str = "/metrics";

/// The contract's paths; each is its own route template (`http.route`, the histogram's `endpoint`).
pub const ROUTES: [&str; 4] = [CITY, HEALTH, API_DOCS, METRICS];

/// Longest request target (path and query as sent) answered normally; longer ones are 414.
pub const MAX_REQUEST_TARGET: usize = 8192;

/// The contract, served byte for byte.
static OPENAPI_JSON: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/openapi.json"));

/// `GET /city/v1/get?id=<id>&language=<language>`
pub async fn get_city(req: HttpRequest, service: web::Data<CityService>) -> Result<HttpResponse, AppError> {
    let query = query::parse_query(req.query_string())?;
    let city = service.get_city(query).await?;
    // actix-web's JSON answer: serde_json (compact, fields in the model's order, non-ASCII
    // literal) and `Content-Type: application/json`, the contract's wire format.
    Ok(HttpResponse::Ok().json(city))
}

pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(Health::new(HealthStatus::Up))
}

pub async fn api_docs() -> HttpResponse {
    // Not `.json()`, which serialises a value: the contract is already JSON, served byte for byte.
    HttpResponse::Ok().content_type(ContentType::json()).body(OPENAPI_JSON)
}

pub async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(telemetry::METRICS_CONTENT_TYPE)
        .body(telemetry::render_metrics())
}

/// Any path not in the contract, any method.
pub async fn not_found() -> Result<HttpResponse, AppError> {
    Err(AppError::NoSuchResource)
}

/// A listed path with a method other than GET or HEAD.
pub async fn method_not_allowed() -> Result<HttpResponse, AppError> {
    Err(AppError::MethodNotAllowed)
}

/// Middleware: a request target over [`MAX_REQUEST_TARGET`] bytes is answered 414 before
/// routing. (Targets over 65534 bytes never get here: actix-http refuses them itself.)
pub async fn limit_request_target(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, actix_web::Error> {
    if request_target_len(req.uri()) > MAX_REQUEST_TARGET {
        let response = AppError::UriTooLong.error_response();
        return Ok(req.into_response(response).map_into_right_body());
    }
    Ok(next.call(req).await?.map_into_left_body())
}

/// Length of the request target as it was on the request line.
fn request_target_len(uri: &Uri) -> usize {
    match uri.scheme() {
        None => uri.path_and_query().map_or(0, |target| target.as_str().len()),
        Some(_) => uri.to_string().len(), // absolute-form, e.g. from a proxy
    }
}

/// The application over the one `service` of all workers: routes, then (outermost first)
/// `tracing-actix-web`'s request span and line, `actix-web-prom`'s histogram and the
/// request-target limit.
pub fn app(
    service: web::Data<CityService>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(service)
        .configure(routes)
        .wrap(from_fn(limit_request_target))
        .wrap(telemetry::metrics())
        .wrap(TracingLogger::<ServerSpan>::new())
}

/// The contract's paths; anything else is a JSON 404, whatever the method.
fn routes(config: &mut web::ServiceConfig) {
    config
        .service(endpoint(CITY, get_city))
        .service(endpoint(HEALTH, health))
        .service(endpoint(API_DOCS, api_docs))
        .service(endpoint(METRICS, metrics))
        .default_service(web::to(not_found));
}

/// A listed path: GET and HEAD go to `handler` (actix answers HEAD without the body but with
/// its Content-Length), other methods get the JSON 405.
fn endpoint<F, Args>(path: &'static str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        // actix matches a percent-decoded path (`/h%65alth` would be `/health`); the contract
        // wants the path exactly as sent.
        .guard(guard::fn_guard(move |ctx| ctx.head().uri.path() == path))
        .route(
            web::route()
                .guard(guard::Any(guard::Get()).or(guard::Head()))
                .to(handler),
        )
        .default_service(web::to(method_not_allowed))
}
