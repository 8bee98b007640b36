//! Every non-2xx answer of the service: one enum, rendered as `{"message":...}` with the
//! contract's fixed texts (they never echo raw request input).

use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};

use crate::models::{self, Language};

#[derive(Debug, Clone, PartialEq)]
pub enum AppError {
    /// Every parameter problem, `id` first, already joined by `; `.
    BadRequest(String),
    CityNotFound(i64),
    NoSuchResource,
    MethodNotAllowed,
    UriTooLong,
    CityMalformed(i64),
    CityNameMissing {
        city_id: i64,
        language: Language,
    },
    RegionNotFound {
        region_id: i64,
        city_id: i64,
    },
    RegionNameMissing {
        region_id: i64,
        language: Language,
    },
    /// Elasticsearch refused, reset, answered 429/5xx or something that is not a document.
    Unavailable,
    /// Elasticsearch did not answer within `ELASTICSEARCH_TIMEOUT_MS`.
    Timeout,
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::BadRequest(problems) => write!(f, "Bad Request: {problems}"),
            AppError::CityNotFound(id) => write!(f, "Not Found: City#{id} not found."),
            AppError::NoSuchResource => f.write_str("Not Found: no such resource."),
            AppError::MethodNotAllowed => f.write_str("Method Not Allowed: use GET."),
            AppError::UriTooLong => f.write_str("URI Too Long: request target exceeds 8192 bytes."),
            AppError::CityMalformed(id) => write!(f, "Internal Server Error: City#{id} is malformed."),
            AppError::CityNameMissing { city_id, language } => {
                write!(f, "Internal Server Error: City#{city_id} has no name in '{language}'.")
            }
            AppError::RegionNotFound { region_id, city_id } => {
                write!(
                    f,
                    "Internal Server Error: Region#{region_id} of City#{city_id} not found."
                )
            }
            AppError::RegionNameMissing { region_id, language } => {
                write!(
                    f,
                    "Internal Server Error: Region#{region_id} has no name in '{language}'."
                )
            }
            AppError::Unavailable => f.write_str("Service Unavailable: search backend unavailable."),
            AppError::Timeout => f.write_str("Gateway Timeout: search backend timed out."),
        }
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::CityNotFound(_) | AppError::NoSuchResource => StatusCode::NOT_FOUND,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::UriTooLong => StatusCode::URI_TOO_LONG,
            AppError::CityMalformed(_)
            | AppError::CityNameMissing { .. }
            | AppError::RegionNotFound { .. }
            | AppError::RegionNameMissing { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            AppError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Timeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if *self == AppError::MethodNotAllowed {
            response.insert_header((header::ALLOW, "GET, HEAD"));
        }
        response.json(models::Error::new(self.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    async fn render(error: AppError) -> (u16, String, Option<String>, String) {
        let response = error.error_response();
        let header = |name| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        let (status, content_type, allow) = (
            response.status().as_u16(),
            header(header::CONTENT_TYPE).unwrap(),
            header(header::ALLOW),
        );
        let body = to_bytes(response.into_body()).await.unwrap();
        (status, content_type, allow, String::from_utf8(body.to_vec()).unwrap())
    }

    #[actix_web::test]
    async fn bodies_are_exact() {
        use AppError::*;
        let cases = [
            (
                BadRequest("parameter 'id' is missing".into()),
                400,
                r#"{"message":"Bad Request: parameter 'id' is missing"}"#,
            ),
            (CityNotFound(7), 404, r#"{"message":"Not Found: City#7 not found."}"#),
            (NoSuchResource, 404, r#"{"message":"Not Found: no such resource."}"#),
            (MethodNotAllowed, 405, r#"{"message":"Method Not Allowed: use GET."}"#),
            (
                UriTooLong,
                414,
                r#"{"message":"URI Too Long: request target exceeds 8192 bytes."}"#,
            ),
            (
                CityMalformed(12),
                500,
                r#"{"message":"Internal Server Error: City#12 is malformed."}"#,
            ),
            (
                CityNameMissing {
                    city_id: 10,
                    language: Language::Pl,
                },
                500,
                r#"{"message":"Internal Server Error: City#10 has no name in 'pl'."}"#,
            ),
            (
                RegionNotFound {
                    region_id: 99,
                    city_id: 11,
                },
                500,
                r#"{"message":"Internal Server Error: Region#99 of City#11 not found."}"#,
            ),
            (
                RegionNameMissing {
                    region_id: 8,
                    language: Language::Sk,
                },
                500,
                r#"{"message":"Internal Server Error: Region#8 has no name in 'sk'."}"#,
            ),
            (
                Unavailable,
                503,
                r#"{"message":"Service Unavailable: search backend unavailable."}"#,
            ),
            (
                Timeout,
                504,
                r#"{"message":"Gateway Timeout: search backend timed out."}"#,
            ),
        ];
        for (error, status, body) in cases {
            let allow = (error == MethodNotAllowed).then(|| "GET, HEAD".to_owned());
            assert_eq!(
                render(error).await,
                (status, "application/json".to_owned(), allow, body.to_owned())
            );
        }
    }

    #[actix_web::test]
    async fn message_is_escaped_json() {
        let (_, _, _, body) = render(AppError::BadRequest("quote \" and ü".into())).await;
        assert_eq!(body, r#"{"message":"Bad Request: quote \" and ü"}"#);
    }
}
