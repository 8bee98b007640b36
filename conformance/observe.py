"""What a service's logs and metrics look like (the spec's Logging and Metrics): the keys of its log
lines and the name and labels of its request-duration histogram, as its descriptor names them under
`logs` and `metrics` (services/<name>/cityref.yaml, or the YAML file given with --known-failures
for an implementation that lives elsewhere; conformance/known.py). Whatever a descriptor leaves out
is the spec's default, so an implementation without either key is judged as before.

A key may name a nested field with dots (`log.level` is the key `log.level`, else `level` inside
`log`), as the ecosystems' structured loggers write either.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re

import yaml

from conformance.known import KnownFailuresError, descriptor

# LOG_LEVEL's values, lowest first (the spec's names).
LEVELS = ("debug", "info", "warn", "error")
# The common names beyond those four, so that a `trace` line ranks below debug and a `fatal` one at
# or above error.
BEYOND = {"trace": -1, "fatal": len(LEVELS)}
# A duration written as text, as Go's time.Duration and Rust's Debug for Duration write it.
DURATION_TEXT = re.compile(r"^(\d+(?:\.\d+)?)(ns|us|µs|ms|s)$")
UNITS_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}

SPEC_HISTOGRAM = "http_server_request_duration_seconds"
SPEC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)


@dataclasses.dataclass(frozen=True)
class LogKeys:
    """The keys of a service's JSON log lines, and the name it writes for each of LOG_LEVEL's levels."""

    time: str = "ts"
    level: str = "level"
    message: str = "msg"
    port: str = "port"  # the listening line's port
    method: str = "method"
    path: str = "path"
    status: str = "status"
    duration: str = "duration_ms"
    duration_unit: str = "ms"  # ns, us, ms or s for a number; `text` for "1.5ms" and the like
    levels: dict[str, str] = dataclasses.field(default_factory=lambda: {lv: lv for lv in LEVELS})

    def get(self, obj: dict, key: str):
        """The value at ``key`` in a parsed line: the flat key, else the dotted path; None if absent."""
        if key in obj:
            return obj[key]
        node = obj
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def level_of(self, obj: dict) -> str | None:
        """The spec's name of the line's level (`trace`/`fatal` beyond them), None if it has none known."""
        raw = self.get(obj, self.level)
        if not isinstance(raw, str):
            return None
        for spec, written in self.levels.items():
            if raw == written:
                return spec
        low = raw.lower()
        return low if low in BEYOND else None

    def rank(self, obj: dict) -> int | None:
        level = self.level_of(obj)
        if level is None:
            return None
        return BEYOND[level] if level in BEYOND else LEVELS.index(level)

    def duration_ms(self, obj: dict) -> float | None:
        """The request line's duration in milliseconds, None if it is not one in the named unit."""
        raw = self.get(obj, self.duration)
        if self.duration_unit == "text":
            m = DURATION_TEXT.match(raw) if isinstance(raw, str) else None
            return float(m[1]) * UNITS_MS[m[2]] if m else None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            return None
        return raw * UNITS_MS[self.duration_unit]


@dataclasses.dataclass(frozen=True)
class MetricNames:
    """The request-duration histogram of /metrics: its name, the labels of method, route and status,
    the route of a request that matched no listed path, the method of one outside RFC 9110, and its
    buckets (None: the integration's own, not judged)."""

    histogram: str = SPEC_HISTOGRAM
    method: str = "http_request_method"
    route: str = "http_route"
    status: str = "http_response_status_code"
    unmatched_route: str = ""  # "" also matches a series without the route label
    other_method: str = "_OTHER"
    buckets: tuple[float, ...] | None = SPEC_BUCKETS


class ShapeError(KnownFailuresError):
    pass


def _fields(cls, doc, where: str) -> dict:
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ShapeError(f"{where}: expected a mapping")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(doc) - names)
    if unknown:
        raise ShapeError(f"{where}: unknown key(s) {unknown}; known: {sorted(names)}")
    return dict(doc)


def parse(doc: dict, where: str = "descriptor") -> tuple[LogKeys, MetricNames]:
    """The ``logs`` and ``metrics`` of a descriptor's top level, validated; defaults for what is absent."""
    logs = _fields(LogKeys, doc.get("logs"), f"{where}: logs")
    if "levels" in logs:
        levels = logs["levels"]
        if not isinstance(levels, dict) or set(levels) != set(LEVELS) or len(set(levels.values())) != len(LEVELS):
            raise ShapeError(f"{where}: logs.levels: one distinct written name for each of {', '.join(LEVELS)}")
    unit = logs.get("duration_unit", "ms")
    if unit != "text" and unit not in UNITS_MS:
        raise ShapeError(f"{where}: logs.duration_unit {unit!r}: one of ns, us, ms, s, text")
    metrics = _fields(MetricNames, doc.get("metrics"), f"{where}: metrics")
    if "buckets" in metrics and metrics["buckets"] is not None:
        metrics["buckets"] = tuple(float(b) for b in metrics["buckets"])
    return LogKeys(**logs), MetricNames(**metrics)


def load(name: str | None, path: pathlib.Path | None = None) -> tuple[LogKeys, MetricNames]:
    """The log keys and metric names of implementation ``name``: from ``path`` if given, else from its
    descriptor in this repository; the spec's defaults when neither names them."""
    src = path or descriptor(name)
    if src is None:
        return LogKeys(), MetricNames()
    doc = yaml.safe_load(src.read_text(encoding="utf-8")) or {}
    if not isinstance(doc, dict):
        raise ShapeError(f"{src}: the top level must be a mapping")
    return parse(doc, str(src))
