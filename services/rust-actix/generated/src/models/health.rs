/*
 * cityref city service
 *
 * The single source of truth for every cityref implementation. Services, the conformance suite (`conformance/`) and the README follow this document; a rule is written here once.  ## Wire format (every response) * JSON bodies a service builds are UTF-8, compact (no whitespace between tokens, no trailing   newline), with non-ASCII characters written literally (`\"Plzeň\"`, never   `\"Plze\\u0148\"`), and with object keys in the order the schema lists them.   The conformance suite compares bodies byte for byte. `/api-docs` is   the exception: it serves `spec/openapi.json` verbatim. * Every JSON response has the header `Content-Type: application/json`,   exactly (no `charset` parameter: RFC 8259 defines none). * Every non-2xx response of the service, including those a framework would   produce by default (unknown path, wrong method, over-long request target),   has a JSON body of exactly `{\"message\":\"<text>\"}` (schema `Error`). Texts   are fixed per status and never echo raw request input:  | status | message | |---|---| | 400 | `Bad Request: ` + every parameter problem, `id` first then `language`, joined by `; ` | | 404 | `Not Found: City#<id> not found.` (id in canonical decimal) | | 404 | `Not Found: no such resource.` (any path not listed here, any method) | | 405 | `Method Not Allowed: use GET.` with `Allow: GET, HEAD` (a listed path, a method other than GET or HEAD) | | 414 | `URI Too Long: request target exceeds 8192 bytes.` | | 500 | `Internal Server Error: City#<id> is malformed.` | | 500 | `Internal Server Error: City#<id> has no name in '<language>'.` | | 500 | `Internal Server Error: Region#<regionId> of City#<id> not found.` | | 500 | `Internal Server Error: Region#<regionId> has no name in '<language>'.` | | 503 | `Service Unavailable: search backend unavailable.` | | 504 | `Gateway Timeout: search backend timed out.` |  ## Request handling (every path) * The request target (path and query, as sent on the request line) may be   up to 8192 bytes. A longer one is answered 414 before anything else. * Paths match exactly: no trailing-slash, case or dot-segment   normalisation (`/city/v1/get/` and `/City/v1/get` are unknown).   An unknown path is 404 whatever the method. * On a listed path, `HEAD` is answered exactly like `GET` (same status and   headers, including `Content-Length`) without a body; any method other than   `GET` and `HEAD` is 405 with `Allow: GET, HEAD`. The method is checked   before the parameters.  ## Query parameters The query is parsed as `application/x-www-form-urlencoded` (WHATWG URL standard): split on `&`, empty pairs skipped, name and value split at the first `=` (a pair without `=` has an empty value), `+` decodes to a space, then percent-decoding. A value that is not valid percent-encoding (`%zz`, a lone `%`) or does not decode to valid UTF-8 is invalid for its parameter; a name that cannot be decoded matches no parameter and is ignored, like every unknown parameter. A parameter given more than once (after decoding its name, with any values) is an error. The parameter rules are on the operation below.  ## Elasticsearch Indices and documents: `spec/elasticsearch/`. Cities are read from the alias `city`, regions from the alias `region`, by document id (the `_id` is the decimal `id`). Documents keep GoOut's original shape with flat dotted keys in `_source` (`\"name.en\"`). A city needs `countryIso` (string), `isFeatured` (boolean), `regionId` (integer) and `id` (integer); a city lacking any of them, or with the wrong type, is malformed (500). A name is missing when its key is absent, `null` or the empty string.  * Per city request a service makes one Elasticsearch request for the city   and, only if the region is not cached, one for the region. Regions that   were found are cached for the life of the process; cities and missing   regions are never cached. * `geometry` and `population` are never transferred from Elasticsearch   (use `_source_includes`/`_source_excludes` or equivalent). * Checks run in this order: city found (404), city well-formed (500),   city name in the language (500), region found (500), region name in the   language (500). * Backend failures: connection refused or reset, an HTTP 429 or 5xx, or any   other answer that is not a document or a plain not-found → 503. No   answer within `ELASTICSEARCH_TIMEOUT_MS` → 504. A failure is never   cached: the next request tries again. * Requests to Elasticsearch ask for uncompressed answers: no   `Accept-Encoding` header, or `identity` only. The answers are a few   hundred bytes; compressing them costs both sides CPU, and every   implementation must do the same upstream work. * A service bounds the Elasticsearch requests it has in flight (a   connection pool or a semaphore, sized by measurement, never more than   256); requests beyond the bound wait for a free connection or permit. * `ELASTICSEARCH_TIMEOUT_MS` bounds each Elasticsearch request as a whole:   from the moment the service needs it, including any wait for a pooled   connection or permit, until its answer has been read. When it expires   the answer is 504.  ## Operation of a service * Configuration (environment): `PORT` (default `8080`, 1–65535, bind all   interfaces), `ELASTICSEARCH_URL` (default `http://127.0.0.1:9200`, an   `http` or `https` URL that may carry `user:password@`, sent as HTTP   basic authentication),   `ELASTICSEARCH_TIMEOUT_MS` (default `2000`, a positive integer),   `LOG_LEVEL` (default `info`; `error`, `warn`, `info` or `debug`). An   invalid value (a variable set but empty is invalid, not defaulted) makes   the service exit non-zero at once with a log line naming the variable. * Startup: before listening, one round-trip to Elasticsearch   (`GET /_cluster/health`, never `GET /`). If it fails, the service logs an   error naming the URL (password redacted) and exits non-zero within 15 s.   Once listening it logs a line with an integer field `port`. * Logging: JSON lines on stdout. Every line has `ts` (RFC 3339), `level`   (lower case) and `msg`; every request is logged once, at `info`, with   `method`, `path` (path with query string, as sent; for a 414 it may be   cut to its first 8192 bytes), `status` (integer) and `duration_ms`   (number). * Shutdown: on SIGTERM or SIGINT stop accepting connections, finish   in-flight requests and exit 0 within 15 s. * Worker and thread counts follow the CPU quota of the container or   cgroup, not the host's core count. * Metrics: `GET /metrics` exposes the histogram   `http_server_request_duration_seconds` (OpenTelemetry's   `http.server.request.duration`) with labels `http_request_method`   (`GET`, `HEAD`, … ; `_OTHER` for a method outside RFC 9110 and PATCH),   `http_route` (the listed path the request matched, e.g. `/city/v1/get`,   also for its 405s; empty for an unknown path) and `http_response_status_code`, and buckets 0.005, 0.01,   0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10. Every   request is counted, including those to `/metrics`, before its response   is sent: a `/metrics` read made after a response has arrived counts it. 
 *
 * The version of the OpenAPI document: 1.0.0
 * 
 * Generated by: https://openapi-generator.tech
 */

use crate::models;
use serde::{Deserialize, Serialize};

#[derive(Clone, Default, Debug, PartialEq, Serialize, Deserialize)]
pub struct Health {
    #[serde(rename = "status")]
    pub status: Status,
}

impl Health {
    pub fn new(status: Status) -> Health {
        Health {
            status,
        }
    }
}
/// 
#[derive(Clone, Copy, Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "UP")]
    Up,
}

impl Default for Status {
    fn default() -> Status {
        Self::Up
    }
}

