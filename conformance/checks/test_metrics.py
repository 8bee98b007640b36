"""Group `metrics`: GET /metrics, the request-duration histogram of the spec, counted exactly.

Each counting check reads /metrics, makes a known number of requests, reads again and compares the
histogram's ``_count`` series (summed over any extra labels) for a method, route and status. The
histogram's name and those three labels are the descriptor's (`metrics`; conformance/observe.py),
by default the spec's: ``http_server_request_duration_seconds`` with http_request_method, http_route
and http_response_status_code.
"""

import math

import pytest

from conformance import metrics

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


def send(http, method: str, tgt: str, status: int):
    got = http(method, tgt).status
    assert got == status, f"{method} {tgt}: status {got}, want {status} (needed for counting)"


def series(names, method: str, route: str, status: int) -> str:
    return f"{{{names.method}={method}, {names.route}={route}, {names.status}={status}}}"


def test_exposition_format(http, cfg):
    names = cfg.metrics
    http("GET", f"{CITY}?id=1&language=en")  # so that a fresh process has observations to expose
    expo = scrape(http)
    assert expo.types.get(names.histogram) == "histogram", (
        f"no '# TYPE {names.histogram} histogram' line (types seen: {sorted(expo.types.items())[:10]})"
    )
    bounds = metrics.bucket_bounds(expo, names.histogram)
    finite = {b for b in bounds if math.isfinite(b)}
    if names.buckets is not None:
        assert finite == set(names.buckets), f"bucket boundaries {sorted(finite)}, want {list(names.buckets)}"
    assert finite, "no finite bucket boundary"
    assert math.inf in bounds, 'no le="+Inf" bucket'
    assert expo.find(names.histogram + "_sum"), f"no {names.histogram}_sum series"
    assert expo.find(names.histogram + "_count"), f"no {names.histogram}_count series"
    labelled = [
        lbl for lbl, _ in expo.find(names.histogram + "_count") if {names.method, names.route, names.status} <= set(lbl)
    ]
    assert labelled, f"no {names.histogram}_count series with the labels {names.method}, {names.route}, {names.status}"


def test_city_requests_counted(http, cfg):
    names = cfg.metrics
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
        got = metrics.grew(before, after, names, method, CITY, status)
        if got != n:
            wrong.append(f"{series(names, method, CITY, status)} grew by {got:g}, want {n}")
        inf = metrics.count(after, names, method, CITY, status, suffix="_bucket")
        cnt = metrics.count(after, names, method, CITY, status)
        if inf != cnt:
            wrong.append(f'{method} {status}: le="+Inf" bucket {inf:g} != _count {cnt:g}')
    assert not wrong, "\n".join(wrong)


def test_metrics_requests_counted(http, cfg):
    """Every request is counted, including those to /metrics: one scrape between two reads."""
    before = scrape(http)
    after = scrape(http)
    got = metrics.grew(before, after, cfg.metrics, "GET", "/metrics", 200)
    assert got == 1, f"GET /metrics 200 grew by {got:g} between two consecutive scrapes, want 1"


def test_unknown_path_counted(http, cfg):
    names = cfg.metrics
    before = scrape(http)
    for path in ("/nope", "/city/v1/get/", "/City/v1/get"):
        send(http, "GET", path, 404)
    after = scrape(http)
    got = metrics.grew(before, after, names, "GET", names.unmatched_route, 404)
    assert got == 3, f"GET 404 on unknown paths ({names.route}={names.unmatched_route!r}) grew by {got:g}, want 3"


def test_method_labels(http, cfg):
    """405s on a listed path: the method label (PATCH is known, FOO is the descriptor's other method,
    by default _OTHER), route of the path."""
    names = cfg.metrics
    before = scrape(http)
    for method in ("POST", "PATCH", "FOO"):
        send(http, method, f"{CITY}?id=1&language=en", 405)
    after = scrape(http)
    wrong = []
    for method in ("POST", "PATCH", names.other_method):
        got = metrics.grew(before, after, names, method, CITY, 405)
        if got != 1:
            wrong.append(f"{series(names, method, CITY, 405)} grew by {got:g}, want 1")
    assert not wrong, "\n".join(wrong)
