"""The suite reads a service's log keys and histogram from its descriptor (conformance/observe.py):
the judgments pass a service that writes its own keys as named, and still fail one whose logs
ignore LOG_LEVEL, whose request line lacks a field, or whose metric does not count a request. The
metrics group's checks run here against an in-process fake of /metrics."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from urllib.parse import parse_qs, urlsplit

import pytest

from conformance import observe
from conformance.checks import test_metrics as checks
from conformance.logcheck import line_problems, log_level_problems, request_problems
from conformance.service import LogLine

# A descriptor in the style of an ecosystem's structured logger: nested and dotted keys, upper-case
# level names, the duration as text.
ECS_LIKE = {
    "logs": {
        "time": "@timestamp",
        "level": "log.level",
        "message": "message",
        "method": "http.request.method",
        "path": "url.original",
        "status": "http.response.status_code",
        "duration": "took",
        "duration_unit": "text",
        "levels": {"debug": "DEBUG", "info": "INFO", "warn": "WARN", "error": "ERROR"},
    },
    "metrics": {
        "histogram": "http_server_requests_seconds",
        "method": "method",
        "route": "uri",
        "status": "status",
        "unmatched_route": "UNKNOWN",
        "other_method": "OTHER",
        "buckets": None,
    },
}
KEYS, NAMES = observe.parse(ECS_LIKE)
ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = "feedc0de"
SERVED = [f"/city/v1/get?id=1&language=en&probe={PROBE}", f"/health?probe={PROBE}"]


def ecs_line(level: str, message: str, **fields) -> LogLine:
    obj = {"@timestamp": "2026-12-03T10:00:00.123Z", "log": {"level": level}, "message": message, **fields}
    return LogLine(0.0, "stdout", json.dumps(obj))


def ecs_request(target: str, status: int = 200, took="1.25ms", method: str = "GET") -> LogLine:
    return ecs_line(
        "INFO",
        "request",
        http={"request": {"method": method}, "response": {"status_code": status}},
        **{"url.original": target},
        took=took,
    )


def test_defaults_are_the_spec():
    keys, names = observe.parse({})
    assert (keys.time, keys.level, keys.message, keys.duration) == ("ts", "level", "msg", "duration_ms")
    assert names.histogram == "http_server_request_duration_seconds" and names.buckets == observe.SPEC_BUCKETS


@pytest.mark.parametrize(
    "doc",
    [
        {"logs": {"lvl": "x"}},
        {"logs": {"levels": {"info": "INFO"}}},
        {"logs": {"levels": {"debug": "I", "info": "I", "warn": "W", "error": "E"}}},
        {"logs": {"duration_unit": "minutes"}},
        {"metrics": {"name": "x"}},
        {"metrics": "x"},
    ],
)
def test_a_bad_descriptor_is_refused(doc):
    with pytest.raises(observe.ShapeError):
        observe.parse(doc)


def test_nested_and_dotted_keys():
    ln = ecs_request(SERVED[0]).json()
    assert KEYS.get(ln, "log.level") == "INFO" and KEYS.get(ln, "url.original") == SERVED[0]
    assert KEYS.get(ln, "http.response.status_code") == 200 and KEYS.get(ln, "http.nope") is None
    assert KEYS.level_of(ln) == "info" and KEYS.duration_ms(ln) == 1.25


def test_lines_in_the_named_keys_pass_and_the_default_keys_fail_them():
    lines = [ecs_line("INFO", "listening", port=8080), ecs_request(SERVED[0])]
    assert line_problems(lines, KEYS) == []
    assert len(line_problems(lines)) == 2 * 3  # ts, level and msg missing from both under the spec's defaults
    bad = [ecs_line("info", "lower case is not a named level"), ecs_line("INFO", "x", **{"@timestamp": "yesterday"})]
    assert len(line_problems(bad, KEYS)) == 2


def test_request_lines_are_judged_in_the_named_keys():
    sent = [("GET", SERVED[0], 200), ("HEAD", SERVED[1], 200)]
    good = [ecs_request(SERVED[0]), ecs_request(SERVED[1], took="250µs", method="HEAD")]
    assert request_problems(good, sent, KEYS) == []
    bad = [ecs_request(SERVED[0], status=201), ecs_request(SERVED[1], took=0.25, method="HEAD")]
    problems = request_problems(bad, sent, KEYS)
    assert len(problems) == 2 and "want the integer 200" in problems[0] and "took" in problems[1], problems
    assert len(request_problems(good[:1], sent, KEYS)) == 1  # HEAD not logged


@pytest.mark.parametrize("level", ["warn", "error"])
def test_a_service_ignoring_log_level_fails_in_its_own_keys(level):
    ignoring = [ecs_line("INFO", "listening", port=8080), ecs_line("DEBUG", "pool"), *map(ecs_request, SERVED)]
    problems = log_level_problems(level, ignoring, SERVED, KEYS)
    assert len(problems) == 4, problems  # the startup line, the debug line, one per served request
    assert log_level_problems(level, [ecs_line("ERROR", "failed")], SERVED, KEYS) == []


def test_info_needs_one_info_line_per_request_in_its_own_keys():
    assert log_level_problems("info", list(map(ecs_request, SERVED)), SERVED, KEYS) == []
    problems = log_level_problems("info", [ecs_request(SERVED[0])], SERVED, KEYS)
    assert len(problems) == 1 and SERVED[1] in problems[0]


@dataclasses.dataclass
class Response:
    status: int
    content_type: str = "text/plain; version=0.0.4"
    body: bytes = b""


class FakeMetrics:
    """A service's /metrics under ``names``: every request counted after its answer is chosen, except
    the methods in ``uncounted`` (a metric that does not count a request)."""

    def __init__(self, names: observe.MetricNames, uncounted: tuple[str, ...] = ()):
        self.names, self.uncounted = names, uncounted
        self.counts: dict[tuple[str, str, int], int] = {}

    def route_and_status(self, method: str, target: str) -> tuple[str, int]:
        url = urlsplit(target)
        if url.path == "/metrics":
            return "/metrics", 200
        if url.path != checks.CITY:
            return self.names.unmatched_route, 404
        if method not in ("GET", "HEAD"):
            return checks.CITY, 405
        city = parse_qs(url.query).get("id", [""])[0]
        return checks.CITY, 400 if not city.isdigit() else 200 if city == "1" else 404

    def exposition(self) -> str:
        n, out = self.names, [f"# TYPE {self.names.histogram} histogram"]
        for (method, route, status), c in sorted(self.counts.items()):
            labels = f'{n.method}="{method}",{n.route}="{route}",{n.status}="{status}"'
            for le in [f"{b:g}" for b in n.buckets or (0.1,)] + ["+Inf"]:
                out.append(f'{n.histogram}_bucket{{{labels},le="{le}"}} {c}')
            out += [f"{n.histogram}_sum{{{labels}}} {c * 0.001}", f"{n.histogram}_count{{{labels}}} {c}"]
        return "\n".join(out) + "\n"

    def __call__(self, method: str, target: str) -> Response:
        route, status = self.route_and_status(method, target)
        body = self.exposition().encode() if route == "/metrics" else b""
        label = method if method in ("GET", "HEAD", "POST", "PATCH") else self.names.other_method
        if method not in self.uncounted:
            key = (label, route, status)
            self.counts[key] = self.counts.get(key, 0) + 1
        return Response(status, body=body)


@dataclasses.dataclass
class Cfg:
    metrics: observe.MetricNames


METRIC_CHECKS = [
    checks.test_exposition_format,
    checks.test_city_requests_counted,
    checks.test_metrics_requests_counted,
    checks.test_unknown_path_counted,
    checks.test_method_labels,
]


@pytest.mark.parametrize("names", [observe.MetricNames(), NAMES], ids=["spec", "micrometer-like"])
@pytest.mark.parametrize("check", METRIC_CHECKS, ids=lambda c: c.__name__)
def test_the_metric_checks_pass_a_counting_service(names, check):
    check(FakeMetrics(names), Cfg(names))


@pytest.mark.parametrize(
    "check,uncounted",
    [
        (checks.test_city_requests_counted, ("HEAD",)),
        (checks.test_metrics_requests_counted, ("GET",)),
        (checks.test_unknown_path_counted, ("GET",)),
        (checks.test_method_labels, ("PATCH",)),
    ],
    ids=lambda v: v.__name__ if callable(v) else "+".join(v),
)
def test_the_metric_checks_fail_a_service_that_does_not_count_a_request(check, uncounted):
    with pytest.raises(AssertionError, match="grew by 0"):
        check(FakeMetrics(NAMES, uncounted), Cfg(NAMES))


def test_the_buckets_are_judged_when_named():
    fake = FakeMetrics(dataclasses.replace(NAMES, buckets=None))
    with pytest.raises(AssertionError, match="bucket boundaries"):
        checks.test_exposition_format(fake, Cfg(dataclasses.replace(NAMES, buckets=(0.5, 1.0))))


def test_the_example_file_parses():
    path = ROOT / "docs" / "examples" / "known-failures.yaml"
    keys, names = observe.load(None, path)
    assert keys.level == "log.level" and keys.levels["warn"] == "WARN" and names == observe.MetricNames()


def test_every_descriptor_parses():
    for path in sorted((ROOT / "services").glob("*/cityref.yaml")):
        observe.load(None, path)
