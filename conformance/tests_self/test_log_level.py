"""The judgment of lifecycle/log-level-is-honoured: what a service that ignores LOG_LEVEL writes
fails it at warn and error, what a compliant service writes passes at every level, and at info a
service that logs no request line fails."""

import json

import pytest

from conformance.logcheck import log_level_problems
from conformance.service import LogLine

PROBE = "0123abcd"
SERVED = [f"/city/v1/get?id=1&language=en&probe={PROBE}", f"/nope/{PROBE}", f"/health?probe={PROBE}"]
FAILING = f"/city/v1/get?id=2&language=en&probe={PROBE}"
SENT = [*SERVED, FAILING]
STATUS = {SERVED[0]: 200, SERVED[1]: 404, SERVED[2]: 200, FAILING: 503}


def line(level: str, msg: str, **fields) -> LogLine:
    obj = {"ts": "2026-11-26T10:00:00.000Z", "level": level, "msg": msg, **fields}
    return LogLine(0.0, "stdout", json.dumps(obj))


def startup() -> list[LogLine]:
    return [line("info", "configuration read"), line("info", "listening", port=8080)]


def request_line(target: str, level: str = "info") -> LogLine:
    return line(level, "request", method="GET", path=target, status=STATUS[target], duration_ms=1.5)


def es_warning() -> LogLine:
    return line("warn", "Elasticsearch unavailable: GET /city/_doc/2", error="HTTP 503")


def ignoring() -> list[LogLine]:
    """A service that writes everything whatever LOG_LEVEL says."""
    return [
        *startup(),
        line("debug", "pool created"),
        *(request_line(t) for t in SERVED),
        es_warning(),
        request_line(FAILING),
    ]


def compliant(level: str) -> list[LogLine]:
    if level == "error":
        return []  # nothing failed badly enough for an error line
    if level == "warn":
        return [es_warning()]
    return [*startup(), *(request_line(t) for t in SERVED), es_warning(), request_line(FAILING)]


@pytest.mark.parametrize("level", ["warn", "error"])
def test_a_service_ignoring_the_variable_fails(level):
    problems = log_level_problems(level, ignoring(), SENT)
    text = "\n".join(problems)
    # every startup info line, the debug line and one line per request are reported
    assert len([p for p in problems if "'info'" in p and "served request" not in p]) == 2, text
    assert len([p for p in problems if "'debug'" in p]) == 1, text
    for target in SENT:
        assert len([p for p in problems if f"served request {target} " in p]) == 1, text
    # the 503's warning: allowed at warn, reported at error
    warned = [p for p in problems if "Elasticsearch unavailable" in p]
    assert len(warned) == (1 if level == "error" else 0), text
    # each message names LOG_LEVEL, the line's level and the line
    for p in problems:
        assert p.startswith(f"LOG_LEVEL={level}: "), p
        assert '"ts": "2026-11-26T10:00:00.000Z"' in p, p


def test_at_error_the_warning_alone_fails():
    problems = log_level_problems("error", [es_warning()], SENT)
    assert len(problems) == 1
    assert "LOG_LEVEL=error" in problems[0] and "level 'warn', below error" in problems[0]
    assert "Elasticsearch unavailable" in problems[0]


@pytest.mark.parametrize("level", ["warn", "error", "info", "debug"])
def test_a_compliant_service_passes(level):
    assert log_level_problems(level, compliant(level), SENT) == []


def test_error_and_fatal_lines_pass_at_error():
    lines = [line("error", "something broke"), line("fatal", "worse")]
    assert log_level_problems("error", lines, SENT) == []
    assert log_level_problems("warn", lines, SENT) == []


@pytest.mark.parametrize(
    "bad,why",
    [
        (LogLine(0.0, "stdout", "Started in 0.4 s"), "not a JSON log line"),
        (line("trace", "x"), "level 'trace', below warn"),
        (line("warning", "x"), "level 'warning', not a level at or above warn"),
        (line("notice", "x", path="/elsewhere"), "level 'notice', not a level at or above warn"),
        (request_line(SERVED[1], level="warn"), f"served request {SERVED[1]}"),
    ],
)
def test_at_warn_every_line_is_at_warn_or_above(bad, why):
    problems = log_level_problems("warn", [es_warning(), bad], SENT)
    assert len(problems) == 1 and why in problems[0], problems
    assert bad.text[:300] in problems[0]


def test_the_line_is_cut_to_300_characters():
    long = line("info", "x" * 1000)
    (problem,) = log_level_problems("warn", [long], SENT)
    assert long.text[:300] in problem and long.text[:301] not in problem


def test_at_info_a_service_writing_no_request_line_fails():
    lines = [*startup(), es_warning()]
    problems = log_level_problems("info", lines, SENT)
    assert len(problems) == len(SENT), problems
    for target, p in zip(SENT, problems, strict=True):
        assert p.startswith("LOG_LEVEL=info: 0 lines") and repr(target) in p, p


def test_at_info_each_request_once_at_info():
    lines = compliant("info") + [request_line(SERVED[0])]  # logged twice
    lines = [ln for ln in lines if json.loads(ln.text).get("path") != SERVED[2]] + [request_line(SERVED[2], "debug")]
    problems = log_level_problems("info", lines, SENT)
    assert len(problems) == 2, problems
    assert "2 lines" in problems[0] and repr(SERVED[0]) in problems[0]
    assert "logged at level 'debug', want info" in problems[1] and SERVED[2] in problems[1]


def test_unknown_level_is_refused():
    with pytest.raises(ValueError):
        log_level_problems("loud", [], SENT)
