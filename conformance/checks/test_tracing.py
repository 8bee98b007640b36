"""Group `tracing`: the spec's "Tracing (OpenTelemetry)" rules, seen from both sides of the service:
the suite's recording proxy in front of Elasticsearch (the `traceparent` the service sends) and, with
``--traces URL``, the trace backend's query API (the spans it exported).

Without ``--traces`` the group checks only that tracing is off by default. With it, every instance
of the run traces (the rest of the suite runs traced too), and the group reads back one request's
server span, its Elasticsearch client spans and their links.
"""

from __future__ import annotations

import pytest

from conformance import fixture, rawhttp
from conformance.proxy import Proxy
from conformance.traces import Context, Span, backend_ready, fetch_trace, wait_trace

ROUTE = "/city/v1/get"
# the first fixture city that is found in English, and a second one: the first request on a fresh
# instance reads the city and its region, the second one (same region cache) may read only the city
FOUND = [(cid, lang) for cid, lang, status, _ in fixture.fixture_expectations() if status == 200 and lang == "en"]
EXPORTED_WITHIN_S = 20.0
ABSENT: list[tuple[str, str]] = []  # (trace id, why it must not be exported), checked last


class Proxied:
    def __init__(self, proxy: Proxy, instance):
        self.proxy, self.instance = proxy, instance

    def get(self, target: str, ctx: Context | None = None) -> tuple[rawhttp.Response, list]:
        """One request (with the caller's traceparent if given) and the Elasticsearch requests it made."""
        mark = self.proxy.mark()
        headers = [("traceparent", ctx.header)] if ctx else []
        try:
            resp = rawhttp.request(self.instance.base, "GET", target, headers=headers, timeout=15, linger=0)
        except rawhttp.HttpError as e:
            pytest.fail(f"GET {target}: no HTTP response: {e}", pytrace=False)
        return resp, self.proxy.since(mark)


def start(cfg, launcher, label: str, env: dict | None = None):
    proxy = Proxy(cfg.es_url)
    proxy.__enter__()
    inst = launcher.make(label, env=env, es_url=f"http://127.0.0.1:{proxy.port}").start()
    try:
        inst.wait_ready()
    except RuntimeError as e:
        proxy.__exit__(None, None, None)
        pytest.fail(str(e), pytrace=False)
    return Proxied(proxy, inst)


@pytest.fixture(scope="module")
def untraced(cfg, launcher, need_process):
    """An instance with OTEL_TRACES_EXPORTER unset (with --traces, every other OTEL_* variable set)."""
    p = start(cfg, launcher, "tracing-off", env={"OTEL_TRACES_EXPORTER": None})
    yield p
    p.instance.stop()
    p.proxy.__exit__(None, None, None)


@pytest.fixture(scope="module")
def tracing(cfg):
    if cfg.tracing is None:
        pytest.skip("tracing on needs --traces URL (a trace backend: `make traces`)")
    why = backend_ready(cfg.tracing.query_url)
    if why:
        pytest.fail(why, pytrace=False)
    return cfg.tracing


@pytest.fixture(scope="module")
def traced(cfg, launcher, need_process, tracing):
    p = start(cfg, launcher, "tracing-on")
    yield p
    p.instance.stop()
    p.proxy.__exit__(None, None, None)


def sent_contexts(upstream: list) -> list[tuple[str, Context | None]]:
    return [(f"{e.method} {e.target}", Context.parse(e.headers.get("traceparent"))) for e in upstream]


def city(i: int = 0) -> str:
    cid, lang = FOUND[i]
    return f"{ROUTE}?id={cid}&language={lang}"


def test_off_by_default(untraced, cfg):
    """OTEL_TRACES_EXPORTER unset: a caller's traceparent is not passed on, and nothing is exported."""
    ctx = Context.new()
    resp, upstream = untraced.get(city(), ctx)
    assert resp.status == 200, f"answered {resp.status} {resp.body[:200]!r}"
    assert upstream, "the request made no Elasticsearch request through the proxy"
    carrying = [f"{e.method} {e.target}: {e.headers['traceparent']!r}" for e in upstream if "traceparent" in e.headers]
    assert not carrying, "tracing is off, yet Elasticsearch was sent a traceparent:\n" + "\n".join(carrying)
    ABSENT.append((ctx.trace_id, "a request to an instance with tracing off"))


def check_server_span(
    spans: list[Span], want_name: str, want_status: int, route: str | None
) -> tuple[Span | None, list[str]]:
    servers = [s for s in spans if s.kind == "server"]
    if len(servers) != 1:
        return None, [f"want exactly one server span, got {len(servers)}"]
    s, problems = servers[0], []
    if s.name != want_name:
        problems.append(f"server span named {s.name!r}, want {want_name!r}")
    if s.tags.get("http.request.method") != "GET":
        problems.append(f"server span http.request.method={s.tags.get('http.request.method')!r}, want 'GET'")
    status = s.tags.get("http.response.status_code")
    if status not in (want_status, str(want_status)):
        problems.append(f"server span http.response.status_code={status!r}, want {want_status}")
    if route is not None and s.tags.get("http.route") != route:
        problems.append(f"server span http.route={s.tags.get('http.route')!r}, want {route!r}")
    if route is None and s.tags.get("http.route"):
        problems.append(f"server span http.route={s.tags.get('http.route')!r} for a path that matched no route")
    return s, problems


def check_client_spans(spans: list[Span], server: Span, upstream: list) -> list[str]:
    clients = [s for s in spans if s.kind == "client"]
    problems = []
    if len(clients) != len(upstream):
        problems.append(f"{len(upstream)} Elasticsearch request(s), {len(clients)} client span(s)")
    for c in clients:
        if c.parent_id != server.span_id:
            problems.append(f"client span {c.name!r} has parent {c.parent_id}, want the server span {server.span_id}")
        if not c.tags.get("http.request.method"):
            problems.append(f"client span {c.name!r} has no http.request.method")
    ids = {c.span_id for c in clients} | {server.span_id}
    for what, sent in sent_contexts(upstream):
        if sent is not None and sent.span_id not in ids:
            problems.append(f"{what}: traceparent's parent {sent.span_id} is neither a client span nor the server span")
    return problems


def report(problems: list[str], spans: list[Span], upstream: list) -> str:
    lines = [*problems, "spans:", *(f"  {s.describe()}" for s in spans), "Elasticsearch requests:"]
    lines += [f"  {what}: traceparent {ctx.header if ctx else None}" for what, ctx in sent_contexts(upstream)]
    return "\n".join(lines)


def test_caller_context_spans_and_propagation(traced, tracing):
    """A sampled caller: one server span, child of the caller's span, with the HTTP attributes; one
    client span per Elasticsearch request, children of the server span; every Elasticsearch request
    carries the caller's trace id."""
    ctx = Context.new()
    resp, upstream = traced.get(city(), ctx)
    assert resp.status == 200, f"answered {resp.status} {resp.body[:200]!r}"
    problems = []
    for what, sent in sent_contexts(upstream):
        if sent is None:
            problems.append(f"{what}: no valid traceparent")
        elif sent.trace_id != ctx.trace_id or not sent.sampled:
            problems.append(f"{what}: traceparent {sent.header}, want trace {ctx.trace_id} sampled")
    spans = wait_trace(
        tracing.query_url,
        ctx.trace_id,
        lambda s: any(x.kind == "server" for x in s) and sum(x.kind == "client" for x in s) >= len(upstream),
        EXPORTED_WITHIN_S,
    )
    if not spans:
        pytest.fail(f"trace {ctx.trace_id} not in the backend after {EXPORTED_WITHIN_S:.0f} s", pytrace=False)
    server, more = check_server_span(spans, f"GET {ROUTE}", 200, ROUTE)
    problems += more
    if server is not None:
        if server.parent_id != ctx.span_id:
            problems.append(f"server span's parent {server.parent_id}, want the caller's span {ctx.span_id}")
        if server.service != tracing.service_name:
            problems.append(f"service name {server.service!r}, want OTEL_SERVICE_NAME {tracing.service_name!r}")
        problems += check_client_spans(spans, server, upstream)
    assert not problems, report(problems, spans, upstream)


def test_new_trace_without_caller_context(traced, tracing):
    """No traceparent from the caller: the server span starts a trace, which Elasticsearch gets."""
    resp, upstream = traced.get(city(1))
    assert resp.status == 200, f"answered {resp.status} {resp.body[:200]!r}"
    sent = [c for _, c in sent_contexts(upstream)]
    assert sent and all(sent), report(["an Elasticsearch request without a valid traceparent"], [], upstream)
    trace_ids = {c.trace_id for c in sent}
    assert len(trace_ids) == 1, report(["one request's Elasticsearch requests carry different trace ids"], [], upstream)
    trace_id = trace_ids.pop()
    spans = wait_trace(
        tracing.query_url,
        trace_id,
        lambda s: any(x.kind == "server" for x in s) and sum(x.kind == "client" for x in s) >= len(upstream),
        EXPORTED_WITHIN_S,
    )
    server, problems = check_server_span(spans, f"GET {ROUTE}", 200, ROUTE)
    if server is not None:
        if server.parent_id is not None:
            problems.append(f"server span has parent {server.parent_id}; without a caller context it is a root span")
        problems += check_client_spans(spans, server, upstream)
    assert not problems, report(problems, spans, upstream)


@pytest.mark.parametrize("path,status", [("/city/v1/nope", 404), ("/", 404)], ids=str)
def test_unmatched_path_span(traced, tracing, path, status):
    """A path no route matched: the span is named by the bare method and has no http.route."""
    ctx = Context.new()
    resp, _ = traced.get(path, ctx)
    assert resp.status == status, f"answered {resp.status} {resp.body[:200]!r}"
    spans = wait_trace(tracing.query_url, ctx.trace_id, lambda s: any(x.kind == "server" for x in s), EXPORTED_WITHIN_S)
    server, problems = check_server_span(spans, "GET", status, None)
    if server is not None and server.parent_id != ctx.span_id:
        problems.append(f"server span's parent {server.parent_id}, want the caller's span {ctx.span_id}")
    assert not problems, report(problems, spans, [])


def test_unsampled_caller_propagates(traced, tracing):
    """A caller that did not sample: its trace id still reaches Elasticsearch, flagged not sampled."""
    ctx = Context.new(sampled=False)
    resp, upstream = traced.get(city(), ctx)
    assert resp.status == 200, f"answered {resp.status} {resp.body[:200]!r}"
    problems = []
    for what, sent in sent_contexts(upstream):
        if sent is None or sent.trace_id != ctx.trace_id or sent.sampled:
            problems.append(f"{what}: traceparent {sent.header if sent else None}, want trace {ctx.trace_id} flags 00")
    assert upstream and not problems, report(problems or ["no Elasticsearch request"], [], upstream)
    ABSENT.append((ctx.trace_id, "a caller's unsampled trace"))


def test_nothing_exported_when_off_or_unsampled(traced, tracing):
    """Last: once a later sampled request's trace has arrived, the traces that must not be exported
    (tracing off, an unsampled caller) are still absent."""
    ctx = Context.new()
    traced.get(city(), ctx)
    spans = wait_trace(tracing.query_url, ctx.trace_id, lambda s: any(x.kind == "server" for x in s), EXPORTED_WITHIN_S)
    assert spans, f"the sentinel trace {ctx.trace_id} never arrived"
    exported = []
    for tid, why in ABSENT:
        found = fetch_trace(tracing.query_url, tid)
        if found:
            exported.append(f"{why}: trace {tid} was exported: " + "; ".join(s.describe() for s in found))
    assert not exported, "\n".join(exported)
