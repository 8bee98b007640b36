"""Group `metrics`: GET /metrics, the request-duration histogram of the spec, counted exactly.

Each counting check reads /metrics, makes a known number of requests, reads again and compares
the ``http_server_request_duration_seconds_count`` series (summed over any extra labels) with
the spec's labels: http_request_method, http_route, http_response_status_code.
"""

import math

import pytest

from conformance import metrics
from conformance.metrics import HISTOGRAM, SPEC_BUCKETS

CITY = "/city/v1/get"


def scrape(http) -> metrics.Exposition:
    resp = http("GET", "/metrics")
    assert resp.status == 200, f"GET /metrics: status {resp.status}"
    media = (resp.content_type or "").split(";", 1)[0].strip()
    assert media == "text/plain", f"GET /metrics: Content-Type {resp.content_type!r}, want text/plain"
    try:
        return metrics.parse(resp.body.decode("utf-8"))
    except (UnicodeDecodeError, metrics.ParseError) as e:
        pytest.fail(f"/metrics is not the Prometheus text format: {e}", pytrace=False)


def count(expo: metrics.Exposition, method: str, route: str | None, status: int) -> float:
    """The _count of the series; route "" also matches a series without http_route."""
    total = 0.0
    for lbl, v in expo.find(HISTOGRAM + "_count"):
        if lbl.get("http_request_method") != method or lbl.get("http_response_status_code") != str(status):
            continue
        if lbl.get("http_route", "") != route:
            continue
        total += v
    return total


def send(http, method: str, tgt: str, status: int):
    got = http(method, tgt).status
    assert got == status, f"{method} {tgt}: status {got}, want {status} (needed for counting)"


def grew(before, after, method, route, status) -> float:
    return count(after, method, route, status) - count(before, method, route, status)


def test_exposition_format(http):
    http("GET", f"{CITY}?id=1&language=en")  # so that a fresh process has observations to expose
    expo = scrape(http)
    assert expo.types.get(HISTOGRAM) == "histogram", (
        f"no '# TYPE {HISTOGRAM} histogram' line (types seen: {sorted(expo.types.items())[:10]})"
    )
    bounds = metrics.bucket_bounds(expo)
    finite = {b for b in bounds if math.isfinite(b)}
    assert finite == set(map(float, SPEC_BUCKETS)), f"bucket boundaries {sorted(finite)}, spec: {list(SPEC_BUCKETS)}"
    assert math.inf in bounds, 'no le="+Inf" bucket'
    assert expo.find(HISTOGRAM + "_sum"), f"no {HISTOGRAM}_sum series"
    assert expo.find(HISTOGRAM + "_count"), f"no {HISTOGRAM}_count series"
    labelled = [
        lbl
        for lbl, _ in expo.find(HISTOGRAM + "_count")
        if {"http_request_method", "http_route", "http_response_status_code"} <= set(lbl)
    ]
    assert labelled, (
        f"no {HISTOGRAM}_count series with the labels http_request_method, http_route and http_response_status_code"
    )


def test_city_requests_counted(http):
    before = scrape(http)
    sent = {("GET", 200): 0, ("GET", 404): 0, ("GET", 400): 0, ("HEAD", 200): 0}
    for _ in range(5):
        send(http, "GET", f"{CITY}?id=1&language=en", 200)
        sent["GET", 200] += 1
    for _ in range(3):
        send(http, "GET", f"{CITY}?id=999&language=en", 404)
        sent["GET", 404] += 1
    for _ in range(2):
        send(http, "GET", f"{CITY}?id=abc&language=en", 400)
        sent["GET", 400] += 1
    for _ in range(2):
        send(http, "HEAD", f"{CITY}?id=1&language=en", 200)
        sent["HEAD", 200] += 1
    after = scrape(http)
    wrong = []
    for (method, status), n in sent.items():
        got = grew(before, after, method, CITY, status)
        if got != n:
            wrong.append(
                f"{{http_request_method={method}, http_route={CITY}, http_response_status_code={status}}}"
                f" grew by {got:g}, want {n}"
            )
        inf = sum(
            v
            for lbl, v in after.find(
                HISTOGRAM + "_bucket",
                http_request_method=method,
                http_route=CITY,
                http_response_status_code=str(status),
            )
            if lbl.get("le") == "+Inf"
        )
        cnt = count(after, method, CITY, status)
        if inf != cnt:
            wrong.append(f'{method} {status}: le="+Inf" bucket {inf:g} != _count {cnt:g}')
    assert not wrong, "\n".join(wrong)


def test_metrics_requests_counted(http):
    """Every request is counted, including those to /metrics: one scrape between two reads."""
    before = scrape(http)
    after = scrape(http)
    got = grew(before, after, "GET", "/metrics", 200)
    assert got == 1, f"GET /metrics 200 grew by {got:g} between two consecutive scrapes, want 1"


def test_unknown_path_counted(http):
    before = scrape(http)
    for path in ("/nope", "/city/v1/get/", "/City/v1/get"):
        send(http, "GET", path, 404)
    after = scrape(http)
    got = grew(before, after, "GET", "", 404)
    assert got == 3, f'GET 404 on unknown paths (http_route="" or absent) grew by {got:g}, want 3'


def test_method_labels(http):
    """405s on a listed path: the method label (PATCH is known, FOO is _OTHER), route of the path."""
    before = scrape(http)
    for method in ("POST", "PATCH", "FOO"):
        send(http, method, f"{CITY}?id=1&language=en", 405)
    after = scrape(http)
    wrong = []
    for method in ("POST", "PATCH", "_OTHER"):
        got = grew(before, after, method, CITY, 405)
        if got != 1:
            wrong.append(
                f"{{http_request_method={method}, http_route={CITY}, http_response_status_code=405}}"
                f" grew by {got:g}, want 1"
            )
    assert not wrong, "\n".join(wrong)
