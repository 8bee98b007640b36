"""Group `backend`: how a service talks to Elasticsearch, through the suite's recording/faulting proxy.

One instance is started for the group with ELASTICSEARCH_URL pointing at the proxy (with
``user:password@``) and a low ELASTICSEARCH_TIMEOUT_MS. The checks run in file order: request
counting needs the region cache cold at the start.
"""

from __future__ import annotations

import base64
import json
import time

import pytest

from conformance import fixture, rawhttp
from conformance.fixture import error_body
from conformance.proxy import Proxy

USER, PASSWORD = "cityref", "s3cret-pw"
CITY = "/city/v1/get"
E503 = error_body("Service Unavailable: search backend unavailable.")
E504 = error_body("Gateway Timeout: search backend timed out.")
EXPECTED = {(cid, lang): (status, body) for cid, lang, status, body in fixture.fixture_expectations()}


class Backend:
    def __init__(self, proxy: Proxy, instance, timeout_ms: int):
        self.proxy, self.instance, self.timeout_ms = proxy, instance, timeout_ms
        self.ready_mark = 0

    def get(self, city_id: int, lang: str = "en", timeout: float = 15.0) -> rawhttp.Response:
        try:
            return rawhttp.request(
                self.instance.base, "GET", f"{CITY}?id={city_id}&language={lang}", timeout=timeout, linger=0
            )
        except rawhttp.HttpError as e:
            pytest.fail(f"GET city {city_id} {lang}: no HTTP response: {e}", pytrace=False)

    def counted(self, city_id: int, lang: str = "en") -> tuple[rawhttp.Response, list]:
        mark = self.proxy.mark()
        resp = self.get(city_id, lang)
        return resp, self.proxy.since(mark)

    def expect_city(self, resp: rawhttp.Response, city_id: int, lang: str = "en") -> list[str]:
        status, body = EXPECTED.get((city_id, lang), (404, error_body(f"Not Found: City#{city_id} not found.")))
        if (resp.status, resp.body) != (status, body):
            return [f"city {city_id} {lang}: want {status} {body[:120]!r}, got {resp.status} {resp.body[:120]!r}"]
        return []

    def recovers(self, city_id: int = 1, attempts: int = 3) -> None:
        """After a fault: the proxy passes again; the service must answer normally by itself."""
        self.proxy.restore()
        seen = []
        for _ in range(attempts):
            resp = self.get(city_id)
            seen.append(resp.status)
            if not self.expect_city(resp, city_id):
                return
            time.sleep(0.2)
        pytest.fail(
            f"no recovery after the backend came back: {attempts} requests for city {city_id} answered {seen}",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def backend(cfg, launcher, need_process):
    with Proxy(cfg.es_url) as proxy:
        url = f"http://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}"
        inst = launcher.make(
            "backend", env={"ELASTICSEARCH_TIMEOUT_MS": str(cfg.backend_timeout_ms)}, es_url=url
        ).start()
        try:
            inst.wait_ready()
        except RuntimeError as e:
            pytest.fail(str(e), pytrace=False)
        b = Backend(proxy, inst, cfg.backend_timeout_ms)
        b.ready_mark = proxy.mark()
        yield b
        inst.stop()


def describe(exchanges) -> str:
    return "; ".join(f"{e.method} {e.target[:100]}" for e in exchanges) or "none"


def test_startup_cluster_health(backend):
    """Before listening: one round-trip to Elasticsearch, GET /_cluster/health."""
    startup = backend.proxy.since(0)[: backend.ready_mark]
    assert [(e.method, e.target.split("?", 1)[0]) for e in startup] == [("GET", "/_cluster/health")], (
        f"backend requests before the first HTTP response: {describe(startup)}; want exactly GET /_cluster/health"
    )


def test_credentials_used(backend):
    """ELASTICSEARCH_URL may carry user:password@: every backend request authenticates with them."""
    backend.get(1)
    want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    bad = [e for e in backend.proxy.since(0) if e.headers.get("authorization") != want]
    assert not bad, (
        f"{len(bad)} backend request(s) without Authorization: {want} "
        f"(first: {bad[0].method} {bad[0].target}, header {bad[0].headers.get('authorization')!r})"
    )


def test_one_request_per_lookup(backend):
    """One backend request per city lookup, plus one for a region not yet cached."""
    wrong = []
    # region 2 has not been looked up yet (only city 1, region 1, before this check)
    for city_id, lang, want, why in (
        (2, "en", 2, "city 2: region 2 cold"),
        (2, "de", 1, "city 2 again: region 2 cached"),
        (9, "en", 1, "city 9: region 2 cached"),
        (1, "en", 1, "city 1: region 1 cached"),
        (2, "en", 1, "city 2 again"),
        (999, "en", 1, "city 999: not found"),
    ):
        resp, exchanges = backend.counted(city_id, lang)
        wrong += backend.expect_city(resp, city_id, lang)
        if len(exchanges) != want:
            wrong.append(f"{why}: {len(exchanges)} backend requests, want {want} ({describe(exchanges)})")
    assert not wrong, "\n".join(wrong)


def test_missing_region_not_cached(backend):
    """Region#99 is missing: never cached, so every lookup of city 15 asks for the city and the region."""
    wrong = []
    for i in range(3):
        resp, exchanges = backend.counted(15)
        wrong += backend.expect_city(resp, 15)
        if len(exchanges) != 2:
            wrong.append(
                f"lookup {i + 1} of city 15: {len(exchanges)} backend requests, want 2 ({describe(exchanges)})"
            )
    assert not wrong, "\n".join(wrong)


def test_es_region_failure_not_cached(backend):
    """A region request failing (503) gives 503; the failure is not cached: the next lookup asks again."""

    def is_region(e):
        return e.target.startswith("/region/") or b'"region"' in e.body

    mark = backend.proxy.mark()
    backend.proxy.set_mode("status", 503, b'{"error":"injected","status":503}', match=is_region)
    try:
        resp = backend.get(4)  # region 4 not cached yet (the geometry sweep comes later)
    finally:
        backend.proxy.restore()
    region_requests = [e for e in backend.proxy.since(mark) if is_region(e)]
    assert region_requests, (
        "no request for region 4 recognised (GET /region/... or a body naming the "
        f"'region' alias): {describe(backend.proxy.since(mark))}"
    )
    assert (resp.status, resp.body) == (503, E503), f"want 503 {E503!r}, got {resp.status} {resp.body[:200]!r}"
    mark = backend.proxy.mark()
    backend.recovers(4)
    again = [e for e in backend.proxy.since(mark) if is_region(e)]
    assert again, "after the failed region request the region was not requested again"


def test_no_geometry_or_population_transferred(backend):
    """geometry and population never come back from Elasticsearch (every fixture city looked up)."""
    wrong = []
    for cid in sorted({c for c, _lang in EXPECTED}):
        wrong += backend.expect_city(backend.get(cid), cid)
    docs = [e for e in backend.proxy.since(0) if e.relayed and b'"_source"' in e.response_body]
    assert docs, "no backend answer with a _source was seen"
    for e in docs:
        for key in (b'"geometry"', b'"population"'):
            if key in e.response_body:
                wrong.append(f"{e.method} {e.target[:120]}: the answer carries {key.decode()}")
    assert not wrong, "\n".join(wrong[:20])


def _fault(backend, set_fault, want_status, want_body, city_id=1):
    set_fault()
    try:
        resp = backend.get(city_id)
    finally:
        backend.proxy.restore()
    assert (resp.status, resp.body) == (want_status, want_body), (
        f"want {want_status} {want_body!r}, got {resp.status} {resp.body[:200]!r}"
    )
    backend.recovers(city_id)


def test_es_refused_503(backend):
    _fault(backend, backend.proxy.refuse, 503, E503)


def test_es_reset_503(backend):
    _fault(backend, lambda: backend.proxy.set_mode("reset"), 503, E503)


@pytest.mark.parametrize(
    "status,body",
    [
        (
            503,
            {
                "error": {"type": "unavailable_shards_exception", "reason": "injected by the conformance suite"},
                "status": 503,
            },
        ),
        (
            429,
            {
                "error": {"type": "es_rejected_execution_exception", "reason": "injected by the conformance suite"},
                "status": 429,
            },
        ),
        (500, {"error": {"type": "exception", "reason": "injected by the conformance suite"}, "status": 500}),
        (
            400,
            {
                "error": {"type": "illegal_argument_exception", "reason": "injected by the conformance suite"},
                "status": 400,
            },
        ),
        (404, {"error": {"type": "index_not_found_exception", "reason": "no such index [city]"}, "status": 404}),
    ],
    ids=["503", "429", "500", "400", "404-index-not-found"],
)
def test_es_error_status_503(backend, status, body):
    """An HTTP 429 or 5xx, or any answer that is not a document or a plain not-found: 503."""
    _fault(backend, lambda: backend.proxy.set_mode("status", status, json.dumps(body).encode()), 503, E503)


def test_es_garbage_503(backend):
    """A 200 that is not a document (not even JSON): 503."""
    _fault(
        backend,
        lambda: backend.proxy.set_mode("status", 200, b"<html>not elasticsearch</html>", "text/html"),
        503,
        E503,
    )


def test_es_hang_504(backend):
    """No answer within ELASTICSEARCH_TIMEOUT_MS: 504, within the timeout + 1 s."""
    timeout = backend.timeout_ms / 1000
    backend.proxy.set_mode("hold")
    try:
        t0 = time.monotonic()
        resp = backend.get(1, timeout=timeout + 10)
        elapsed = time.monotonic() - t0
    finally:
        backend.proxy.restore()
    assert (resp.status, resp.body) == (504, E504), f"want 504 {E504!r}, got {resp.status} {resp.body[:200]!r}"
    assert elapsed <= timeout + 1, f"504 after {elapsed:.2f}s, want within {timeout + 1:.2f}s"
    assert elapsed >= timeout * 0.9, f"504 after {elapsed:.2f}s, before ELASTICSEARCH_TIMEOUT_MS ({timeout}s)"
    backend.recovers(1)


def test_no_compressed_answers_requested(backend):
    """Every backend request asks for an uncompressed answer: no Accept-Encoding, or identity only."""
    backend.get(1)
    bad = [
        e
        for e in backend.proxy.since(0)
        if [
            t.split(";")[0].strip().lower()
            for t in e.headers.get("accept-encoding", "identity").split(",")
            if t.strip()
        ]
        not in ([], ["identity"])
    ]
    assert not bad, (
        f"{len(bad)} backend request(s) asked for a compressed answer "
        f"(first: {bad[0].method} {bad[0].target[:100]}, "
        f"Accept-Encoding: {bad[0].headers.get('accept-encoding')!r})"
    )


OVERLOAD_REQUESTS = 300  # more than the spec's bound on requests in flight to Elasticsearch
MAX_IN_FLIGHT = 256


def test_es_in_flight_bounded_and_timeout_includes_wait(backend):
    """Elasticsearch hangs while 300 lookups arrive: at most 256 reach it at once, and every lookup,
    including those waiting for a pooled connection or permit, answers 504 within the timeout + 1.5 s."""
    timeout = backend.timeout_ms / 1000
    mark = backend.proxy.mark()
    backend.proxy.set_mode("hold")
    try:
        # From one thread with one selector: each time runs from sending the request to its answer,
        # without client threads queueing for the interpreter on a 2-CPU machine.
        results = rawhttp.concurrent(
            backend.instance.base, "GET", f"{CITY}?id=1&language=en", OVERLOAD_REQUESTS, timeout + 10
        )
    finally:
        backend.proxy.restore()
    in_flight = backend.proxy.max_in_flight(mark)
    assert in_flight <= MAX_IN_FLIGHT, (
        f"{in_flight} requests were in flight to Elasticsearch at once, want at most {MAX_IN_FLIGHT}"
    )
    # 300 connections at once on a service limited to about one CPU add scheduling delay: 1.5 s of
    # slack here (1 s for a single request in test_es_hang_504).
    limit = timeout + 1.5
    wrong = [
        f"lookup {i}: {error} after {elapsed:.2f}s"
        if resp is None
        else f"lookup {i}: {resp.status} {resp.body!r:.120} after {elapsed:.2f}s"
        for i, (elapsed, resp, error) in enumerate(results)
        if resp is None or (resp.status, resp.body) != (504, E504) or elapsed > limit
    ]
    assert not wrong, (
        f"{len(wrong)} of {OVERLOAD_REQUESTS} lookups did not answer 504 within {limit:.1f}s:\n" + "\n".join(wrong[:10])
    )
    # The proxy now relays what it held; a client whose cancel does not abort the exchange still
    # sends the abandoned requests, which the service must work off before answering normally.
    backend.recovers(1, attempts=20)


def test_never_get_root(backend):
    """GET / is never sent (this Elasticsearch answers it 405)."""
    bad = [e for e in backend.proxy.since(0) if e.target.split("?", 1)[0] in ("/", "")]
    assert not bad, f"{describe(bad)}"
